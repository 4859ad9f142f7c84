//! A request padded to tens of MiB (`padTo`), written on the harness connection's socket in
//! pieces as it goes out, never held whole (docs/security.md, "Memory"). tungstenite formats a
//! frame whole into its write buffer, which keeps its largest size for the connection's life:
//! 60 MiB for core-api's heavy case, on top of the frame built to send. The core reads the same
//! bytes either way: one frame, final, masked, its payload the request's JSON with the padding
//! at `padAt`.

use super::{Conn, Unread, Ws, UNSENT_BYTES};
use futures_util::SinkExt;
use std::io;
use std::pin::Pin;
use std::sync::atomic::Ordering;
use std::sync::{Arc, Mutex};
use std::task::{ready, Context, Poll};
use tokio::io::{AsyncRead, AsyncWrite, ReadBuf};
use tokio::net::TcpStream;
use tokio::sync::mpsc;
use tokio_tungstenite::tungstenite::handshake::client::Request;
use tokio_tungstenite::tungstenite::protocol::frame::coding::{Data, OpCode};
use tokio_tungstenite::tungstenite::protocol::frame::FrameHeader;
use tokio_tungstenite::tungstenite::protocol::WebSocketConfig;
use tokio_tungstenite::tungstenite::Message;

/// How much of a padded frame is made and written at a time (a multiple of 4: each piece
/// starts at the mask's first byte).
const PIECE: usize = 64 << 10;

/// A frame's payload: `head`, `pad` bytes of `x`, then `tail`.
pub(super) struct Padded {
    pub head: Vec<u8>,
    pub pad: usize,
    pub tail: Vec<u8>,
    pub binary: bool,
}

impl Padded {
    pub fn len(&self) -> usize {
        self.head.len() + self.pad + self.tail.len()
    }

    /// The payload's bytes `from..to`, appended to `out`.
    fn piece(&self, from: usize, to: usize, out: &mut Vec<u8>) {
        let (h, p) = (self.head.len(), self.head.len() + self.pad);
        if from < h {
            out.extend_from_slice(&self.head[from..to.min(h)]);
        }
        let (a, b) = (from.max(h), to.min(p));
        if a < b {
            out.resize(out.len() + (b - a), b'x');
        }
        let (a, b) = (from.max(p), to);
        if a < b {
            out.extend_from_slice(&self.tail[a - p..b - p]);
        }
    }

    /// Into the wire trace: the payload's start, as much as the trace keeps, and its length.
    fn trace(&self) {
        let method = if self.binary { "ws binary" } else { "ws" };
        let mut start = Vec::new();
        self.piece(0, self.len().min(PIECE * 2), &mut start);
        if start.len() == self.len() {
            return crate::trace::sent(method, &start);
        }
        // As a whole frame is traced: a final newline is no part of it.
        let last = match (self.tail.last(), self.pad) {
            (Some(&b), _) => b,
            (None, 0) => self.head.last().copied().unwrap_or_default(),
            (None, _) => b'x',
        };
        crate::trace::sent_start(method, &start, self.len() - usize::from(last == b'\n'));
    }
}

/// What a connection's writer sends: a message through tungstenite, or a padded frame past its
/// buffer.
pub(super) enum Out {
    Message(Message),
    Padded(Padded),
}

impl Out {
    fn len(&self) -> usize {
        match self {
            Out::Message(m) => m.len(),
            Out::Padded(p) => p.len(),
        }
    }
}

impl Conn {
    /// Queue a frame of a step's for the core; an error, and nothing queued, when the core has
    /// left more than [`UNSENT_BYTES`] unread.
    pub(super) fn send(&self, m: Out) -> Result<(), String> {
        let len = m.len();
        let queued = self.unread.unsent.fetch_add(len, Ordering::SeqCst);
        if queued + len > UNSENT_BYTES {
            self.unread.unsent.fetch_sub(len, Ordering::SeqCst);
            return Err(format!(
                "not sent: the core has not read {} MiB hcpspec sent on this connection (core_api::UNSENT_BYTES is {} MiB)",
                queued >> 20,
                UNSENT_BYTES >> 20
            ));
        }
        // The wire trace: what a step sent (a cut prefix is copied, never the whole frame).
        match &m {
            Out::Message(Message::Text(t)) => crate::trace::sent("ws", t.as_bytes()),
            Out::Message(Message::Binary(b)) => crate::trace::sent("ws binary", b),
            Out::Padded(p) => p.trace(),
            _ => {}
        }
        let _ = self.tx.send(m);
        Ok(())
    }
}

/// A connection's writer: hcpspec's frames and its answers to core's pings, in that order of
/// preference, until the connection is dropped.
pub(super) async fn write_frames(
    ws: futures_util::stream::SplitSink<Ws, Message>,
    armed: Arc<Mutex<Option<Padded>>>,
    mut out: mpsc::UnboundedReceiver<Out>,
    mut pings: mpsc::Receiver<Message>,
    written: Arc<Unread>,
) {
    let mut sink = ws;
    loop {
        let (m, len) = tokio::select! {
            biased;
            m = out.recv() => match m {
                Some(m) => {
                    let len = m.len();
                    (m, len)
                }
                None => break,
            },
            Some(p) = pings.recv() => (Out::Message(p), 0),
        };
        let sent = match m {
            Out::Message(m) => sink.send(m).await,
            // Written by the socket at the flush, once tungstenite's buffer is empty.
            Out::Padded(p) => {
                *armed.lock().unwrap_or_else(|e| e.into_inner()) = Some(p);
                sink.flush().await
            }
        };
        if sent.is_err() {
            break;
        }
        written.unsent.fetch_sub(len, Ordering::SeqCst);
    }
}

/// Open a harness connection as `connect_async_with_config` does (a TCP connection to the
/// request's host and port, Nagle's algorithm kept), on a [`Socket`].
pub(super) async fn connect(
    req: Request,
    config: WebSocketConfig,
) -> Result<Ws, tokio_tungstenite::tungstenite::Error> {
    use tokio_tungstenite::tungstenite::error::{Error, UrlError};
    use tokio_tungstenite::tungstenite::stream::Mode;
    let host = req.uri().host().ok_or(Error::Url(UrlError::NoHostName))?;
    let port = match (req.uri().port_u16(), req.uri().scheme_str()) {
        (Some(p), _) => p,
        (None, Some("wss")) => 443,
        (None, Some("ws")) => 80,
        _ => return Err(Error::Url(UrlError::UnsupportedUrlScheme)),
    };
    let tcp = TcpStream::connect(format!("{host}:{port}"))
        .await
        .map_err(Error::Io)?;
    // hcpspec is built without TLS: a `wss` URL fails as tungstenite's own connect fails it.
    if let Mode::Tls = tokio_tungstenite::tungstenite::client::uri_mode(req.uri())? {
        return Err(Error::Url(UrlError::TlsFeatureNotEnabled));
    }
    let socket = Socket {
        tcp,
        armed: Arc::default(),
        writing: None,
    };
    let (ws, _) = tokio_tungstenite::client_async_with_config(req, socket, Some(config)).await?;
    Ok(ws)
}

/// What a padded frame is armed with, from a connection.
pub(super) fn armed(ws: &Ws) -> Arc<Mutex<Option<Padded>>> {
    ws.get_ref().armed.clone()
}

/// A harness connection's socket: tungstenite's bytes pass through. A padded frame, once armed,
/// starts at the next flush (tungstenite flushes only once its buffer is written out, so between
/// two frames), and every byte tungstenite writes after that waits for its end.
pub(super) struct Socket {
    tcp: TcpStream,
    armed: Arc<Mutex<Option<Padded>>>,
    writing: Option<Writing>,
}

/// A padded frame going out: its header, then its payload masked, a piece at a time.
struct Writing {
    frame: Padded,
    mask: [u8; 4],
    /// The padding masked, as a piece starts it: copied, not masked byte by byte (in a test
    /// build, unoptimised, that loop was a fifth of the suites' CPU).
    masked_pad: Vec<u8>,
    /// The piece being written, and how much of it is.
    piece: Vec<u8>,
    done: usize,
    /// Where the next piece starts in the payload.
    next: usize,
}

impl Writing {
    fn new(frame: Padded) -> Writing {
        use std::hash::BuildHasher;
        // A client's mask is unpredictable (RFC 6455 § 5.3): std's random hash keys.
        let seed = std::collections::hash_map::RandomState::new().hash_one(frame.len());
        let mask = (seed as u32).to_ne_bytes();
        let opcode = OpCode::Data(if frame.binary {
            Data::Binary
        } else {
            Data::Text
        });
        let header = FrameHeader {
            opcode,
            mask: Some(mask),
            ..FrameHeader::default()
        };
        let mut piece = Vec::with_capacity(PIECE);
        header
            .format(frame.len() as u64, &mut piece)
            .expect("a header formats into a vector");
        let mut masked_pad = Vec::new();
        if frame.pad > 0 {
            masked_pad.reserve_exact(PIECE);
            masked_pad.extend(mask.map(|m| b'x' ^ m));
            while masked_pad.len() < PIECE {
                masked_pad.extend_from_within(..masked_pad.len().min(PIECE - masked_pad.len()));
            }
        }
        Writing {
            frame,
            mask,
            masked_pad,
            piece,
            done: 0,
            next: 0,
        }
    }

    /// The next piece of the payload, masked; false when the frame is all written.
    fn refill(&mut self) -> bool {
        let len = self.frame.len();
        if self.next >= len {
            return false;
        }
        let (from, to) = (self.next, len.min(self.next + PIECE));
        self.piece.clear();
        let f = &self.frame;
        let (h, p) = (f.head.len(), f.head.len() + f.pad);
        if from < h {
            masked(&mut self.piece, &f.head[from..to.min(h)], self.mask);
        }
        let (a, b) = (from.max(h), to.min(p));
        if a < b {
            // A piece starts at a multiple of 4, so its byte i is masked with mask[i % 4].
            let i = self.piece.len();
            self.piece
                .extend_from_slice(&self.masked_pad[i..i + (b - a)]);
        }
        let (a, b) = (from.max(p), to);
        if a < b {
            masked(&mut self.piece, &f.tail[a - p..b - p], self.mask);
        }
        (self.next, self.done) = (to, 0);
        true
    }
}

/// `bytes` appended to `piece` masked at their place in it (a piece starts at the mask's first
/// byte).
fn masked(piece: &mut Vec<u8>, bytes: &[u8], mask: [u8; 4]) {
    let start = piece.len();
    piece.extend_from_slice(bytes);
    for (i, b) in piece.iter_mut().enumerate().skip(start) {
        *b ^= mask[i & 3];
    }
}

impl Socket {
    /// Write the padded frame going out, if any, to its end.
    fn finish(&mut self, cx: &mut Context<'_>) -> Poll<io::Result<()>> {
        while let Some(w) = &mut self.writing {
            if w.done == w.piece.len() && !w.refill() {
                self.writing = None;
                break;
            }
            match ready!(Pin::new(&mut self.tcp).poll_write(cx, &w.piece[w.done..]))? {
                0 => return Poll::Ready(Err(io::ErrorKind::WriteZero.into())),
                n => w.done += n,
            }
        }
        Poll::Ready(Ok(()))
    }
}

impl AsyncRead for Socket {
    fn poll_read(
        mut self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        buf: &mut ReadBuf<'_>,
    ) -> Poll<io::Result<()>> {
        Pin::new(&mut self.tcp).poll_read(cx, buf)
    }
}

impl AsyncWrite for Socket {
    fn poll_write(
        mut self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        buf: &[u8],
    ) -> Poll<io::Result<usize>> {
        ready!(self.finish(cx))?;
        Pin::new(&mut self.tcp).poll_write(cx, buf)
    }

    fn poll_flush(mut self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<io::Result<()>> {
        if self.writing.is_none() {
            let armed = self.armed.lock().unwrap_or_else(|e| e.into_inner()).take();
            self.writing = armed.map(Writing::new);
        }
        ready!(self.finish(cx))?;
        Pin::new(&mut self.tcp).poll_flush(cx)
    }

    fn poll_shutdown(mut self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<io::Result<()>> {
        ready!(self.finish(cx))?;
        Pin::new(&mut self.tcp).poll_shutdown(cx)
    }
}

#[cfg(test)]
mod tests {
    use super::{Padded, Writing, PIECE};
    use tokio_tungstenite::tungstenite::protocol::frame::coding::{Data, OpCode};
    use tokio_tungstenite::tungstenite::protocol::frame::Frame;

    /// The bytes a padded frame goes out as, piece after piece.
    fn written(p: Padded) -> (Vec<u8>, [u8; 4]) {
        let mut w = Writing::new(p);
        let mut wire = std::mem::take(&mut w.piece);
        while w.refill() {
            assert!(w.piece.len() <= PIECE);
            wire.extend_from_slice(&w.piece);
        }
        (wire, w.mask)
    }

    #[test]
    fn a_padded_frame_goes_out_as_tungstenite_writes_the_whole_message() {
        // Across pieces: the head, padding over two pieces and more, the tail with `append`.
        for (pad, binary) in [(3 * PIECE + 5, false), (0, false), (PIECE - 9, true)] {
            let (head, tail) = (br#"{"t":"req","p":{"pad":""#.to_vec(), b"\"}}\n{".to_vec());
            let mut whole = head.clone();
            whole.resize(head.len() + pad, b'x');
            whole.extend_from_slice(&tail);
            let (wire, mask) = written(Padded {
                head,
                pad,
                tail,
                binary,
            });
            let data = if binary { Data::Binary } else { Data::Text };
            let mut frame = Frame::message(whole, OpCode::Data(data), true);
            frame.header_mut().mask = Some(mask);
            let mut want = Vec::new();
            frame.format(&mut want).expect("formats");
            assert_eq!(wire.len(), want.len(), "pad {pad}");
            assert!(wire == want, "pad {pad}: the bytes differ");
        }
    }
}
