// Shared prelude: complex arithmetic and float-bit helpers. The shader registry
// (src/shaders.rs) prepends this file to the shaders that list it; declare nothing here that
// needs a binding.

// Complex product (x + iy)(u + iv), complex numbers as vec2 (re, im).
fn cmul(a: vec2<f32>, b: vec2<f32>) -> vec2<f32> {
    return vec2<f32>(a.x * b.x - a.y * b.y, a.x * b.y + a.y * b.x);
}

// Multiply by −i: (x + iy)(−i) = y − ix.
fn mul_neg_i(v: vec2<f32>) -> vec2<f32> {
    return vec2<f32>(v.y, -v.x);
}

// NaN or ±infinity (exponent all ones).
fn non_finite(v: f32) -> bool {
    return (bitcast<u32>(v) & 0x7f800000u) == 0x7f800000u;
}

