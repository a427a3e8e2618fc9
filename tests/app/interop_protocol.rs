//! The `--share` message (crates/protocols/src/share.rs): its byte layout, its JSON keys, validation, and
//! a round trip over a Unix socket pair with fds passed by SCM_RIGHTS.

use std::io::{Read, Write};
use std::os::fd::AsFd;
use std::os::unix::net::UnixStream;

use vizdeck::gpu::external::ExternalMemoryInfo;
use vizdeck::interop::protocol::{
    self, Dtype, FrameSemaphores, HEADER_LEN, MAGIC, PROTOCOL_VERSION, ShareDescription,
    ShareError, SharedBuffer, SharedSemaphore, uuid_hex,
};

fn info() -> ExternalMemoryInfo {
    ExternalMemoryInfo {
        size: 1024 * 16,
        allocation_size: 1024 * 16 + 64,
        memory_type_index: 2,
        dedicated: true,
        device_uuid: *b"mesa22.3.6\0\0\0\0\0\0",
        driver_uuid: *b"llvmpipeUUID\0\0\0\0",
        device_name: "llvmpipe".into(),
    }
}

fn description() -> ShareDescription {
    let info = info();
    ShareDescription {
        protocol: PROTOCOL_VERSION,
        scene: "particles".into(),
        device_uuid: uuid_hex(&info.device_uuid),
        driver_uuid: uuid_hex(&info.driver_uuid),
        buffers: vec![SharedBuffer::c_contiguous(
            "positions",
            0,
            &info,
            Dtype::F32,
            &[1024, 4],
        )],
        semaphores: Some(FrameSemaphores {
            ready: SharedSemaphore {
                fd_index: 1,
                initial_value: 0,
            },
            released: SharedSemaphore {
                fd_index: 2,
                initial_value: 0,
            },
        }),
    }
}

#[test]
fn the_message_is_magic_length_and_json() {
    let msg = description().encode().unwrap();
    assert_eq!(msg[..4], MAGIC);
    let n = u32::from_le_bytes(msg[4..8].try_into().unwrap()) as usize;
    assert_eq!(msg.len(), HEADER_LEN + n);
    let body = std::str::from_utf8(&msg[HEADER_LEN..]).unwrap();
    assert_eq!(
        body,
        concat!(
            r#"{"protocol":1,"scene":"particles","#,
            r#""device_uuid":"6d65736132322e332e36000000000000","#,
            r#""driver_uuid":"6c6c766d706970655555494400000000","#,
            r#""buffers":[{"name":"positions","fd_index":0,"size":16384,"allocation_size":16448,"#,
            r#""memory_type_index":2,"dedicated":true,"dtype":"f32","shape":[1024,4],"#,
            r#""strides":[16,4],"offset":0,"memory":"device"}],"#,
            r#""semaphores":{"ready":{"fd_index":1,"initial_value":0},"#,
            r#""released":{"fd_index":2,"initial_value":0}}}"#
        )
    );
    let header: [u8; HEADER_LEN] = msg[..HEADER_LEN].try_into().unwrap();
    assert_eq!(protocol::body_len(&header).unwrap(), n);
    let mut bad = header;
    bad[0] = b'X';
    assert!(matches!(
        protocol::body_len(&bad),
        Err(ShareError::BadMagic(_))
    ));
}

#[test]
fn descriptions_that_do_not_fit_are_refused() {
    let d = description();
    d.validate(3).unwrap();
    let e = d.validate(2).unwrap_err().to_string();
    assert!(e.contains("released semaphore: fd 2 of 2"), "{e}");
    let mut big = d.clone();
    big.buffers[0].shape = vec![1025, 4];
    let e = big.validate(3).unwrap_err().to_string();
    assert!(e.contains("does not fit"), "{e}");
    let mut twice = d.clone();
    twice.semaphores.as_mut().unwrap().released.fd_index = 1;
    assert!(twice.validate(3).unwrap_err().to_string().contains("twice"));
    let mut old = d;
    old.protocol = 0;
    assert!(old.validate(3).is_err());
    assert_eq!(
        SharedBuffer::c_contiguous("x", 0, &info(), Dtype::F16, &[3, 5, 7]).strides,
        [70, 14, 2]
    );
}

#[test]
fn fds_and_description_cross_a_unix_socket() {
    let (mut vizdeck, mut producer) = UnixStream::pair().unwrap();
    // Three fds to pass (memory, ready, released): the ends of other socket pairs, so the
    // receiver can prove they work.
    let (a, mut a_peer) = UnixStream::pair().unwrap();
    let (b, mut b_peer) = UnixStream::pair().unwrap();
    let (c, mut c_peer) = UnixStream::pair().unwrap();
    let desc = description();
    protocol::send(&mut vizdeck, &desc, &[a.as_fd(), b.as_fd(), c.as_fd()]).unwrap();
    drop((a, b, c));
    let (got, fds) = protocol::recv(&mut producer).unwrap();
    assert_eq!(got, desc);
    assert_eq!(fds.len(), 3);
    for (fd, peer, word) in [
        (&fds[0], &mut a_peer, b"mem!"),
        (&fds[1], &mut b_peer, b"rdy!"),
        (&fds[2], &mut c_peer, b"rel!"),
    ] {
        let mut s = UnixStream::from(fd.try_clone().unwrap());
        s.write_all(word).unwrap();
        let mut back = [0; 4];
        peer.read_exact(&mut back).unwrap();
        assert_eq!(&back, word);
    }
    // A closed socket is an end of file, said as such.
    drop(vizdeck);
    let e = protocol::recv(&mut producer).unwrap_err();
    assert!(
        matches!(&e, ShareError::Io(io) if io.kind() == std::io::ErrorKind::UnexpectedEof),
        "{e}"
    );
}
