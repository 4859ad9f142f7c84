//! `http://HOST:PORT[/PREFIX]`: one JSON-RPC message per `POST {base}/rpc` body, the answer in
//! the response body. Plain HTTP/1.1 through hcpspec's blocking client (`http1.rs`), on the
//! calling thread: no runtime, no thread hop per call. A connection is kept alive across the
//! calls of a case and, back in its runtime spec's pool, across cases; a kept connection is
//! used again only when nothing came on it meanwhile (the server did not close it).

use super::http1::{Conn, Failure, Until};
use super::rpc::{excerpt, secs, size, Link};
use super::sched::{Deadline, Waits, Whose};
use crate::error::BadInput;
use std::sync::{Arc, Mutex, OnceLock};
use std::time::{Duration, Instant};

/// What every adapter of one `http://` runtime spec shares.
pub(crate) struct HttpShared {
    /// `{prefix}/rpc`.
    target: String,
    /// `host:port`, as errors name it and the `host` header carries it.
    authority: String,
    /// Connections kept alive between cases, at most one per adapter alive at once.
    idle: Mutex<Vec<Conn>>,
    port: u16,
    /// The processes serving it (`loopback::listeners`), found at the first call: their waits
    /// for a CPU are not charged to a call's deadline.
    whose: OnceLock<Whose>,
}

impl HttpShared {
    /// Parse the spec; nothing is connected until the first call.
    pub fn new(spec: &str) -> Result<Arc<HttpShared>, BadInput> {
        let base: http::Uri = spec
            .parse()
            .map_err(|e| format!("--runtime {spec}: not a URL ({e})"))?;
        if base.scheme_str() != Some("http") {
            return Err(format!("--runtime {spec}: only plain http:// is supported").into());
        }
        let host = base
            .host()
            .ok_or_else(|| format!("--runtime {spec}: no host"))?;
        let port = base.port_u16().unwrap_or(80);
        let authority = format!("{host}:{port}");
        let target = format!("{}/rpc", base.path().trim_end_matches('/'));
        Ok(Arc::new(HttpShared {
            target,
            authority,
            idle: Mutex::new(Vec::new()),
            port,
            whose: OnceLock::new(),
        }))
    }

    /// The processes serving it, found at the first need.
    fn whose(&self) -> &Whose {
        self.whose.get_or_init(|| Whose {
            pids: super::loopback::listeners(self.port),
            ..Whose::default()
        })
    }

    /// A kept connection that is still idle, if any.
    fn kept(&self) -> Option<Conn> {
        let mut idle = self.idle.lock().unwrap_or_else(|p| p.into_inner());
        while let Some(c) = idle.pop() {
            if c.idle() {
                return Some(c);
            }
        }
        None
    }
}

/// One case's link: its connection, taken from the pool at the first call and given back when
/// the case ends, if its last answer left it fit for another request.
pub(crate) struct HttpLink {
    shared: Arc<HttpShared>,
    conn: Option<Conn>,
    /// The waits for a CPU as last read, as the stdio adapter keeps them
    /// (`stdio::WAITS_EVERY`): a call mostly costs no reads of /proc.
    waits: Option<(Instant, std::thread::ThreadId, Waits)>,
}

impl HttpLink {
    pub fn new(shared: Arc<HttpShared>) -> HttpLink {
        HttpLink {
            shared,
            conn: None,
            waits: None,
        }
    }
}

impl Drop for HttpLink {
    fn drop(&mut self) {
        if let Some(c) = self.conn.take() {
            let mut idle = self.shared.idle.lock().unwrap_or_else(|p| p.into_inner());
            idle.push(c);
        }
    }
}

impl Link for HttpLink {
    fn exchange(&mut self, frame: &str, deadline: Duration, cap: usize) -> Result<Vec<u8>, String> {
        let shared = &self.shared;
        let whose = shared.whose();
        let now = Instant::now();
        let me = std::thread::current().id();
        if self
            .waits
            .as_ref()
            .is_none_or(|(at, on, _)| now - *at > super::stdio::WAITS_EVERY || *on != me)
        {
            self.waits = Some((now, me, Waits::of(whose)));
        }
        let waits = self.waits.as_ref().map(|w| w.2.clone()).unwrap_or_default();
        let mut until = Until {
            deadline: Deadline::since(deadline, now, waits),
            whose,
        };
        let mut got: Vec<u8> = Vec::new();
        let fail = |f, got: &[u8]| say(f, &shared.authority, deadline, cap, got);
        let kept = self.conn.take().or_else(|| shared.kept());
        let reused = kept.is_some();
        let mut conn = match kept {
            Some(c) => c,
            None => Conn::open(&shared.authority, &mut until).map_err(|f| fail(f, &[]))?,
        };
        let post = |conn: &mut Conn, until: &mut Until<'_>, got: &mut Vec<u8>| {
            conn.post(
                &shared.authority,
                &shared.target,
                frame.as_bytes(),
                until,
                cap,
                got,
            )
        };
        let mut answer = post(&mut conn, &mut until, &mut got);
        // A kept connection the server closed without saying so, its close still on its way
        // when the connection was taken (a loaded machine delays it): it ended with nothing of
        // an answer, so the request goes once more on a new connection, as browsers resend on a
        // reused one (Chromium's ShouldResendRequest).
        if reused && matches!(answer, Err(Failure::Closed(_))) && !conn.heard() {
            conn = Conn::open(&shared.authority, &mut until).map_err(|f| fail(f, &[]))?;
            got.clear();
            answer = post(&mut conn, &mut until, &mut got);
        }
        let answer = answer.map_err(|f| fail(f, &got))?;
        // Kept only after a whole answer the server does not close after.
        if answer.reusable {
            self.conn = Some(conn);
        }
        match answer.status {
            200 => Ok(got),
            204 => Err("HTTP 204: the shim took the request for a notification".to_string()),
            s => Err(format!("HTTP {}: {}", status(s), excerpt(&got))),
        }
    }

    fn whose(&self) -> Whose {
        self.shared.whose().clone()
    }
}

/// A status as reqwest said it: `404 Not Found`, `599 <unknown status code>`.
fn status(code: u16) -> String {
    match http::StatusCode::from_u16(code) {
        Ok(s) => s.to_string(),
        Err(_) => code.to_string(),
    }
}

/// The adapter's words for a failure, `got` the body so far.
fn say(f: Failure, authority: &str, deadline: Duration, cap: usize, got: &[u8]) -> String {
    match f {
        Failure::Connect(why) => format!("cannot connect to {authority}: {why}"),
        Failure::Closed(why) => format!("the connection closed mid-call ({why})"),
        Failure::MidAnswer(why) => format!("the connection closed mid-answer ({why})"),
        Failure::OverCap(how) => {
            format!("the answer is over the size cap of {} ({how})", size(cap))
        }
        Failure::NotHttp(what) => format!("the answer is not HTTP/1.1 ({what})"),
        Failure::Late => {
            let so_far = if got.is_empty() {
                "nothing".to_string()
            } else {
                format!("{} bytes: {}", got.len(), excerpt(got))
            };
            format!("no answer within {} (received {so_far})", secs(deadline))
        }
    }
}
