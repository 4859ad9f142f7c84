//! The HTTP adapter's client: one blocking HTTP/1.1 exchange at a time over a
//! [`std::net::TcpStream`], on the calling thread, kept alive between calls. No TLS, proxy or
//! redirect (docs/security.md: hcpspec's clients reach the loopback interface only, and follow
//! no implementation elsewhere); an answer's body is read by its `Content-Length`, chunked, or
//! to the connection's end, as servers in any language may send it.
//!
//! Why by hand: reqwest and hyper spent about 65 µs of CPU a call where a bare HTTP/1.1 client
//! spends 18 (request building, the URL, the pool, header maps, the body channel, a runtime);
//! the adapter needs one request shape and one answer, so this is all of it (docs/bench.md).

use super::sched::{Deadline, Whose};
use std::io::{ErrorKind, Read, Write};
use std::net::{TcpStream, ToSocketAddrs};
use std::os::fd::AsRawFd;
use std::time::Duration;

/// Headers an answer may carry, at most (hyper's default is 100).
pub const MAX_HEADERS: usize = 100;
/// A chunk's size line (its size and extensions), at most.
pub const MAX_CHUNK_LINE: usize = 4096;

/// What went wrong, for the adapter to say in its words.
#[derive(Debug)]
pub(crate) enum Failure {
    /// No connection could be made (the I/O error's words).
    Connect(String),
    /// The connection ended, or broke, before the answer's head was whole.
    Closed(String),
    /// It ended or broke in the answer's body.
    MidAnswer(String),
    /// The deadline passed.
    Late,
    /// The answer's head or body passed the size cap: how far (bytes so far, or announced).
    OverCap(String),
    /// Not an HTTP/1.x answer (what the parser said).
    NotHttp(String),
}

/// An answer read whole: its status, and whether its connection can carry the next request.
#[derive(Debug)]
pub(crate) struct Answer {
    pub status: u16,
    pub reusable: bool,
}

/// A call's deadline as the client waits on it: in wall time while that says, then in charged
/// time (`sched`: what the machine made the server's threads or this one wait for a CPU is not
/// charged).
pub(crate) struct Until<'a> {
    pub deadline: Deadline,
    pub whose: &'a Whose,
}

impl Until<'_> {
    /// What is left to wait, in wall time; zero once the deadline has passed.
    fn left(&mut self) -> Duration {
        self.deadline.left(self.whose)
    }
}

/// One connection, and what was read past the last answer's end (nothing, from a server that
/// keeps to HTTP/1.1 without pipelining).
pub(crate) struct Conn {
    stream: TcpStream,
    buf: Vec<u8>,
    /// What a read fills, made once per connection (not zeroed again per read).
    scratch: Box<[u8]>,
}

impl Conn {
    /// A connection to `authority` (`host:port`), made before `until`.
    pub fn open(authority: &str, until: &mut Until<'_>) -> Result<Conn, Failure> {
        let addrs = authority
            .to_socket_addrs()
            .map_err(|e| Failure::Connect(e.to_string()))?;
        let mut last = Failure::Connect("the name resolves to no address".into());
        for addr in addrs {
            let left = until.left();
            if left.is_zero() {
                return Err(Failure::Late);
            }
            match TcpStream::connect_timeout(&addr, left) {
                Ok(stream) => {
                    // Requests are small and go in one write: no waiting for an ACK.
                    let _ = stream.set_nodelay(true);
                    return Ok(Conn {
                        stream,
                        buf: Vec::new(),
                        scratch: vec![0; 16 << 10].into_boxed_slice(),
                    });
                }
                Err(e) if e.kind() == ErrorKind::TimedOut => last = Failure::Late,
                Err(e) => last = Failure::Connect(e.to_string()),
            }
        }
        Err(last)
    }

    /// Whether any byte of an answer came on it since the last whole answer.
    pub fn heard(&self) -> bool {
        !self.buf.is_empty()
    }

    /// Whether a kept connection can still carry a request: nothing to read on it (a server
    /// that closed it, or wrote past its last answer, would make the next answer a lie).
    pub fn idle(&self) -> bool {
        self.buf.is_empty() && !readable(&self.stream, Duration::ZERO)
    }

    /// POST `body` to `target` (`/rpc`) on `host` and read the answer's body into `got` (the
    /// bytes so far on any failure), within `until`, each of the head and the body within `cap`.
    pub fn post(
        &mut self,
        host: &str,
        target: &str,
        body: &[u8],
        until: &mut Until<'_>,
        cap: usize,
        got: &mut Vec<u8>,
    ) -> Result<Answer, Failure> {
        let mut request = Vec::with_capacity(body.len() + 128);
        // `write!` into a Vec cannot fail.
        let _ = write!(
            request,
            "POST {target} HTTP/1.1\r\nhost: {host}\r\ncontent-type: application/json\r\ncontent-length: {}\r\n\r\n",
            body.len()
        );
        request.extend_from_slice(body);
        self.send(&request, until)?;
        let (status, framing, close) = self.head(until, cap)?;
        match framing {
            Framing::None => {}
            Framing::Length(n) if n > cap => {
                return Err(Failure::OverCap(format!("its Content-Length is {n}")))
            }
            Framing::Length(n) => self.body_exact(n, got, until)?,
            Framing::Chunked => self.body_chunked(got, until, cap)?,
            Framing::ToEnd => {
                self.body_to_end(got, until, cap)?;
                return Ok(Answer {
                    status,
                    reusable: false,
                });
            }
        }
        Ok(Answer {
            status,
            reusable: !close,
        })
    }

    fn send(&mut self, request: &[u8], until: &mut Until<'_>) -> Result<(), Failure> {
        let mut rest = request;
        while !rest.is_empty() {
            let left = until.left();
            if left.is_zero() {
                return Err(Failure::Late);
            }
            // A server that reads nothing fills the socket's buffer: each write ends at what
            // wall time leaves of the deadline, and the deadline in charged time says whether
            // it passed.
            let _ = self.stream.set_write_timeout(Some(left));
            match self.stream.write(rest) {
                Ok(0) => return Err(Failure::Closed("the connection took no more bytes".into())),
                Ok(n) => rest = &rest[n..],
                Err(e) => match e.kind() {
                    ErrorKind::WouldBlock | ErrorKind::TimedOut | ErrorKind::Interrupted => {}
                    _ => return Err(Failure::Closed(e.to_string())),
                },
            }
        }
        Ok(())
    }

    /// Read more into `buf` (after waiting for it until `until`); the count read, 0 at the end.
    fn fill(&mut self, until: &mut Until<'_>) -> Result<usize, Failure> {
        loop {
            let left = until.left();
            if left.is_zero() {
                return Err(Failure::Late);
            }
            if !readable(&self.stream, left) {
                // Woken early (a signal), or wall time is up: `left` says what remains.
                continue;
            }
            match self.stream.read(&mut self.scratch) {
                Ok(n) => {
                    self.buf.extend_from_slice(&self.scratch[..n]);
                    return Ok(n);
                }
                Err(e) if e.kind() == ErrorKind::Interrupted => continue,
                Err(e) if e.kind() == ErrorKind::WouldBlock => continue,
                Err(e) => return Err(Failure::Closed(e.to_string())),
            }
        }
    }

    /// The answer's head: its status, how its body is framed, and whether the server closes
    /// the connection after it. 1xx answers before it are skipped.
    fn head(&mut self, until: &mut Until<'_>, cap: usize) -> Result<(u16, Framing, bool), Failure> {
        loop {
            let mut headers = [httparse::EMPTY_HEADER; MAX_HEADERS];
            let mut r = httparse::Response::new(&mut headers);
            let parsed = r.parse(&self.buf).map_err(|e| {
                Failure::NotHttp(format!("{e}: {}", super::rpc::excerpt(&self.buf)))
            })?;
            let httparse::Status::Complete(end) = parsed else {
                if self.buf.len() > cap {
                    return Err(so_far(self.buf.len()));
                }
                if self.fill(until)? == 0 {
                    return Err(Failure::Closed(if self.buf.is_empty() {
                        "the server closed the connection before an answer".into()
                    } else {
                        "the server closed the connection in the answer's head".into()
                    }));
                }
                continue;
            };
            let status = r.code.unwrap_or_default();
            let http10 = r.version == Some(0);
            let (mut framing, mut close, mut keep) = (Framing::ToEnd, false, false);
            for h in r.headers.iter() {
                let value = std::str::from_utf8(h.value).unwrap_or_default().trim();
                if h.name.eq_ignore_ascii_case("transfer-encoding") {
                    // chunked is the last coding when there is one (RFC 9112 §6.3).
                    if value.to_ascii_lowercase().ends_with("chunked") {
                        framing = Framing::Chunked;
                    }
                } else if h.name.eq_ignore_ascii_case("content-length")
                    && !matches!(framing, Framing::Chunked)
                {
                    let n = value
                        .parse()
                        .map_err(|_| Failure::NotHttp(format!("a Content-Length of {value:?}")))?;
                    framing = Framing::Length(n);
                } else if h.name.eq_ignore_ascii_case("connection") {
                    let v = value.to_ascii_lowercase();
                    close |= v.contains("close");
                    keep |= v.contains("keep-alive");
                }
            }
            self.buf.drain(..end);
            if (100..200).contains(&status) {
                continue;
            }
            if status == 204 || status == 304 {
                framing = Framing::None;
            }
            // HTTP/1.0 closes unless told to keep alive; HTTP/1.1 keeps alive unless told to close.
            return Ok((status, framing, close || (http10 && !keep)));
        }
    }

    fn body_exact(
        &mut self,
        n: usize,
        got: &mut Vec<u8>,
        until: &mut Until<'_>,
    ) -> Result<(), Failure> {
        while self.buf.len() < n {
            // What came so far is in the error's `got`, as a deadline's message quotes it.
            let more = self.fill(until).map_err(mid_answer);
            if !matches!(more, Ok(1..)) {
                got.extend_from_slice(&self.buf);
                let came = self.buf.len();
                more?;
                return Err(Failure::MidAnswer(format!("{came} of its {n} bytes came")));
            }
        }
        got.extend(self.buf.drain(..n));
        Ok(())
    }

    fn body_to_end(
        &mut self,
        got: &mut Vec<u8>,
        until: &mut Until<'_>,
        cap: usize,
    ) -> Result<(), Failure> {
        loop {
            got.append(&mut self.buf);
            if got.len() > cap {
                return Err(so_far(got.len()));
            }
            if self.fill(until).map_err(mid_answer)? == 0 {
                return Ok(());
            }
        }
    }

    fn body_chunked(
        &mut self,
        got: &mut Vec<u8>,
        until: &mut Until<'_>,
        cap: usize,
    ) -> Result<(), Failure> {
        loop {
            let line = self.line(until)?;
            let size = line.split(';').next().unwrap_or_default().trim();
            let size = usize::from_str_radix(size, 16)
                .map_err(|_| Failure::NotHttp(format!("a chunk size of {size:?}")))?;
            if size == 0 {
                // Trailers, if any, to the empty line.
                while !self.line(until)?.is_empty() {}
                return Ok(());
            }
            if got.len().saturating_add(size) > cap {
                let with = got.len().saturating_add(size);
                return Err(Failure::OverCap(format!(
                    "{with} bytes with its next chunk"
                )));
            }
            self.body_exact(size, got, until)?;
            if !self.line(until)?.is_empty() {
                return Err(Failure::NotHttp("a chunk longer than its size".into()));
            }
        }
    }

    /// The next line of the body's framing, without its CRLF.
    fn line(&mut self, until: &mut Until<'_>) -> Result<String, Failure> {
        loop {
            if let Some(i) = memchr::memchr(b'\n', &self.buf) {
                let line = String::from_utf8_lossy(&self.buf[..i])
                    .trim_end()
                    .to_string();
                self.buf.drain(..=i);
                return Ok(line);
            }
            if self.buf.len() > MAX_CHUNK_LINE {
                return Err(Failure::NotHttp("a chunk's framing line over 4 KiB".into()));
            }
            if self.fill(until).map_err(mid_answer)? == 0 {
                return Err(Failure::MidAnswer("the chunked body ended early".into()));
            }
        }
    }
}

/// How an answer's body ends.
enum Framing {
    None,
    Length(usize),
    Chunked,
    ToEnd,
}

fn so_far(n: usize) -> Failure {
    Failure::OverCap(format!("{n} bytes so far"))
}

/// An error in the body: past the head, a closed connection is a cut answer.
fn mid_answer(f: Failure) -> Failure {
    match f {
        Failure::Closed(why) => Failure::MidAnswer(why),
        f => f,
    }
}

/// Whether `fd` has something to read (data, or the end) within `within`.
fn readable(fd: &impl AsRawFd, within: Duration) -> bool {
    let mut p = libc::pollfd {
        fd: fd.as_raw_fd(),
        events: libc::POLLIN,
        revents: 0,
    };
    let ms = if within.is_zero() {
        0
    } else {
        within.as_millis().clamp(1, i32::MAX as u128) as libc::c_int
    };
    // SAFETY: one valid pollfd for the length of the call.
    let n = unsafe { libc::poll(&mut p, 1, ms) };
    // POLLHUP and POLLERR count as readable: the read then says what happened.
    n > 0
}
