//! Format `Cbor`: a CBOR payload read into ciborium's `Value`, then walked into the sink with a
//! stack of frames (no recursion, so deep nesting cannot overflow the stack).

use super::sink::Sink;
use super::{MAX_DEPTH, PayloadError, TOO_DEEP, TRAILING};
use vizdeck_base::text::one_line;

/// Format `Cbor`, first step: the payload as one CBOR value (nesting limited to [`MAX_DEPTH`]).
pub(super) fn cbor_value(payload: &[u8]) -> Result<ciborium::Value, PayloadError> {
    let mut rest = payload;
    let value = ciborium::de::from_reader_with_recursion_limit(&mut rest, MAX_DEPTH).map_err(
        |e: ciborium::de::Error<_>| {
            PayloadError::NotCbor(match e {
                ciborium::de::Error::Io(_) => "unexpected end of data".to_owned(),
                ciborium::de::Error::Syntax(at) => format!("syntax error at byte {at}"),
                ciborium::de::Error::Semantic(_, m) => one_line(&m),
                ciborium::de::Error::RecursionLimitExceeded => TOO_DEEP.to_owned(),
            })
        },
    )?;
    if !rest.is_empty() {
        return Err(PayloadError::NotCbor(TRAILING.to_owned()));
    }
    Ok(value)
}

/// `v` without its tags.
pub(super) fn untag(mut v: &ciborium::Value) -> &ciborium::Value {
    while let ciborium::Value::Tag(_, inner) = v {
        v = inner;
    }
    v
}

/// A map or array being walked by [`walk_cbor`], with the path length of its node.
pub(super) enum Frame<'v> {
    Seq(std::slice::Iter<'v, ciborium::Value>, usize, usize),
    Map(
        std::slice::Iter<'v, (ciborium::Value, ciborium::Value)>,
        usize,
    ),
}

/// Format `Cbor`, second step: the leaves of `root` into `sink`, with a stack of frames (no
/// recursion).
pub(super) fn walk_cbor(sink: &mut Sink, root: &ciborium::Value) -> Result<(), PayloadError> {
    use ciborium::Value;
    let mut stack: Vec<Frame> = Vec::new();
    let mut next = Some(root);
    loop {
        if let Some(v) = next.take() {
            match untag(v) {
                Value::Array(items) => {
                    sink.enter()?;
                    stack.push(Frame::Seq(items.iter(), 0, sink.path.len()));
                }
                Value::Map(entries) => {
                    sink.enter()?;
                    stack.push(Frame::Map(entries.iter(), sink.path.len()));
                }
                Value::Integer(i) => sink.int(i128::from(*i))?,
                Value::Float(f) => sink.float(*f)?,
                Value::Bool(b) => sink.boolean(*b)?,
                Value::Text(s) => sink.text(s)?,
                Value::Null => sink.null()?,
                _ => sink.other()?,
            }
        }
        let Some(frame) = stack.last_mut() else {
            return Ok(());
        };
        match frame {
            Frame::Seq(items, index, base) => {
                sink.path.truncate(*base);
                if let Some(v) = items.next() {
                    sink.push_display(*index);
                    *index += 1;
                    next = Some(v);
                }
            }
            Frame::Map(entries, base) => {
                sink.path.truncate(*base);
                for (k, v) in entries.by_ref() {
                    let named = match untag(k) {
                        Value::Text(s) => {
                            sink.push_key(s);
                            true
                        }
                        Value::Integer(i) => {
                            sink.push_display(i128::from(*i));
                            true
                        }
                        Value::Bool(b) => {
                            sink.push_display(b);
                            true
                        }
                        Value::Float(f) => {
                            sink.push_display(f);
                            true
                        }
                        _ => false,
                    };
                    if named {
                        next = Some(v);
                        break;
                    }
                }
            }
        }
        if next.is_none() {
            stack.pop();
            sink.depth -= 1;
        }
    }
}

#[cfg(test)]
mod tests {
    use super::super::PayloadFormat;
    use super::super::tests::{decode_ok, decoder, named, owned};

    #[test]
    fn cbor_integer_keys_and_tags() {
        use ciborium::Value;
        let value = Value::Map(vec![
            (Value::Integer(7.into()), Value::Float(2.5)),
            (
                Value::Text("t".into()),
                Value::Tag(1, Box::new(Value::Integer(9.into()))),
            ),
            (Value::Bytes(vec![0xff]), Value::Integer(1.into())),
        ]);
        let mut cbor = Vec::new();
        ciborium::ser::into_writer(&value, &mut cbor).unwrap();
        let mut d = decoder(PayloadFormat::Cbor, None);
        decode_ok(&mut d, "x", &cbor);
        assert_eq!(owned(&d), named(&[("x/7", 2.5), ("x/t", 9.0)]));
    }
}
