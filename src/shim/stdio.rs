//! The stdio server: one JSON-RPC message per line on stdin, one response per line on stdout,
//! in order. stdout carries nothing else; logs go to stderr. The server ends after answering
//! `shutdown`, or when stdin closes (disposing what was left).

use super::{error_frame, Conn, Service, MAX_MESSAGE, PARSE_ERROR};
use serde_json::Value;
use std::io::{BufRead, Read, Write};

/// Serve `input` to `output` until `shutdown` or end of input.
pub fn serve(
    service: &Service,
    mut input: impl BufRead,
    mut output: impl Write,
) -> std::io::Result<()> {
    let mut conn = Conn::default();
    let mut line = Vec::new();
    loop {
        line.clear();
        let n = Read::take(input.by_ref(), MAX_MESSAGE as u64 + 1).read_until(b'\n', &mut line)?;
        if n == 0 {
            break;
        }
        let reply = if line.len() > MAX_MESSAGE && line.last() != Some(&b'\n') {
            // Skip the rest of the oversized line, then say so.
            let mut rest = Vec::new();
            while Read::take(input.by_ref(), 1 << 16).read_until(b'\n', &mut rest)? > 0
                && rest.last() != Some(&b'\n')
            {
                rest.clear();
            }
            Some(error_frame(
                Value::Null,
                PARSE_ERROR,
                format!("request over {MAX_MESSAGE} bytes"),
            ))
        } else {
            let text = String::from_utf8_lossy(&line);
            let text = text.trim();
            if text.is_empty() {
                continue;
            }
            service.handle(text, &mut conn)
        };
        if let Some(reply) = reply {
            output.write_all(reply.as_bytes())?;
            output.write_all(b"\n")?;
            output.flush()?;
        }
        if conn.shutdown {
            break;
        }
    }
    service.close(conn);
    Ok(())
}
