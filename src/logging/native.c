/* The C side of vizdeck's log routing (src/logging.rs): ALSA's error handler is C-variadic, which
 * stable Rust cannot define, and libwayland's log handler takes a va_list. Both format their
 * message here and hand one finished line to Rust (`vizdeck_native_log`), which logs it. */

#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>

/* Defined in src/logging.rs. `source`: 0 = ALSA, 1 = libwayland-client. */
void vizdeck_native_log(int source, const char *file, int line, const char *function, int err,
                        const char *message);

/* Matches alsa-lib's snd_lib_error_handler_t. */
void vizdeck_alsa_error_handler(const char *file, int line, const char *function, int err,
                                const char *fmt, ...) {
    char message[1024];
    va_list args;
    va_start(args, fmt);
    vsnprintf(message, sizeof message, fmt != NULL ? fmt : "", args);
    va_end(args);
    vizdeck_native_log(0, file, line, function, err, message);
}

/* Matches libwayland's wl_log_func_t. */
void vizdeck_wayland_log_handler(const char *fmt, va_list args) {
    char message[1024];
    vsnprintf(message, sizeof message, fmt != NULL ? fmt : "", args);
    vizdeck_native_log(1, NULL, 0, NULL, 0, message);
}
