//! `udp://addr:port`: one message per datagram (PlotJuggler's UDP server convention), no topic.
//! The kernel's count of datagrams it dropped for the socket (receive buffer full) is read from
//! `/proc/net/udp` (`udp6`) and shown as lost by the transport.

use std::net::UdpSocket;

use super::*;

/// Largest UDP payload (65,535 − 8-byte UDP header − 20-byte IPv4 header).
const MAX_DATAGRAM: usize = 65_507;
/// Receive buffer asked of the kernel, bytes (it may grant less).
const RECV_BUFFER: usize = 4 << 20;

/// Binds `addr` (`host:port`).
///
/// # Errors
///
/// The address does not resolve or cannot be bound (in use, not local), one line.
pub(super) fn bind(addr: &str) -> Result<UdpSocket, String> {
    let socket = UdpSocket::bind(addr).map_err(|e| format!("cannot listen on {addr}: {e}"))?;
    socket
        .set_read_timeout(Some(Duration::from_millis(FLUSH_MS)))
        .map_err(|e| format!("{addr}: {e}"))?;
    set_recv_buffer(&socket, RECV_BUFFER);
    Ok(socket)
}

/// Asks for a larger receive buffer, so bursts wait in the kernel rather than being dropped.
fn set_recv_buffer(socket: &UdpSocket, bytes: usize) {
    use std::os::fd::AsRawFd;
    let size = bytes as libc::c_int;
    // SAFETY: a valid socket fd and a c_int option value of the size passed.
    unsafe {
        libc::setsockopt(
            socket.as_raw_fd(),
            libc::SOL_SOCKET,
            libc::SO_RCVBUF,
            (&raw const size).cast(),
            std::mem::size_of::<libc::c_int>() as libc::socklen_t,
        );
    }
}

/// Receives datagrams until `stop`.
pub(super) fn run(socket: UdpSocket, mut ingest: Ingest, stop: &AtomicBool) {
    ingest.stats.connected();
    let inode = socket_inode(&socket);
    let mut buf = vec![0u8; MAX_DATAGRAM + 1];
    let mut checked = Instant::now();
    while !stop.load(Ordering::Relaxed) {
        match socket.recv_from(&mut buf) {
            Ok((n, _)) => ingest.message("", &buf[..n]),
            Err(e)
                if matches!(
                    e.kind(),
                    std::io::ErrorKind::WouldBlock | std::io::ErrorKind::TimedOut
                ) => {}
            Err(e) if e.kind() == std::io::ErrorKind::Interrupted => {}
            Err(e) => {
                let reason = format!("receive failed: {e}");
                ingest.stats.failed(&reason);
                ingest.close(Msg::Error(reason), stop);
                return;
            }
        }
        ingest.tick();
        if checked.elapsed() > Duration::from_millis(250) {
            checked = Instant::now();
            if let Some(drops) = inode.and_then(kernel_drops) {
                ingest.stats.transport_lost.store(drops, Ordering::Relaxed);
            }
        }
    }
    ingest.flush();
}

/// The socket's inode number (as `/proc/net/udp` lists it).
fn socket_inode(socket: &UdpSocket) -> Option<u64> {
    use std::os::fd::AsRawFd;
    use std::os::unix::fs::MetadataExt;
    std::fs::metadata(format!("/proc/self/fd/{}", socket.as_raw_fd()))
        .ok()
        .map(|m| m.ino())
}

/// The kernel's drop count of the UDP socket with inode `inode`: the last column of its line in
/// `/proc/net/udp` or `/proc/net/udp6` (Linux `proc(5)`).
fn kernel_drops(inode: u64) -> Option<u64> {
    ["/proc/net/udp", "/proc/net/udp6"].iter().find_map(|path| {
        let text = std::fs::read_to_string(path).ok()?;
        text.lines().skip(1).find_map(|line| {
            let cols: Vec<&str> = line.split_whitespace().collect();
            // sl local rem st tx:rx tr:when retrnsmt uid timeout inode ref pointer drops
            (cols.len() >= 13 && cols[9].parse::<u64>().ok()? == inode)
                .then(|| cols[12].parse().ok())
                .flatten()
        })
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The socket's own line is found in `/proc/net/udp` and reads 0 drops while idle.
    #[test]
    fn own_socket_reads_no_drops() {
        let socket = bind("127.0.0.1:0").unwrap();
        let inode = socket_inode(&socket).unwrap();
        assert_eq!(kernel_drops(inode), Some(0));
        assert_eq!(kernel_drops(u64::MAX), None);
    }
}
