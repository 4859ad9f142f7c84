//! The stdio server: one JSON-RPC message per line on stdin, one response per line on stdout,
//! in order. stdout carries nothing else; logs go to stderr. The server ends after answering
//! `shutdown`, or when stdin closes (disposing what was left).

use super::{error_frame, Conn, Service, MAX_MESSAGE, PARSE_ERROR};
use serde_json::Value;
use std::io::{BufRead, Read, Write};

/// Read the next line of `input` into `line` (cleared first, newline kept), never holding more
/// than `cap` bytes and a chunk of it: `None` at the end of input, `Some(false)` for a line over
/// `cap` (its rest read in bounded chunks and dropped), `Some(true)` otherwise.
pub fn next_line(
    input: &mut impl BufRead,
    line: &mut Vec<u8>,
    cap: usize,
) -> std::io::Result<Option<bool>> {
    line.clear();
    let n = Read::take(input.by_ref(), cap as u64 + 1).read_until(b'\n', line)?;
    if n == 0 {
        return Ok(None);
    }
    if line.len() > cap && line.last() != Some(&b'\n') {
        line.clear();
        while Read::take(input.by_ref(), 1 << 16).read_until(b'\n', line)? > 0
            && line.last() != Some(&b'\n')
        {
            line.clear();
        }
        line.clear();
        return Ok(Some(false));
    }
    Ok(Some(true))
}

/// Serve `input` to `output` until `shutdown` or end of input.
pub fn serve(
    service: &Service,
    mut input: impl BufRead,
    mut output: impl Write,
) -> std::io::Result<()> {
    let mut conn = Conn::default();
    let mut line = Vec::new();
    while let Some(fits) = next_line(&mut input, &mut line, MAX_MESSAGE)? {
        let reply = if !fits {
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
