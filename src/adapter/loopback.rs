//! Every address a case, a shim or a core names resolves to the loopback interface
//! (docs/security.md): the one check, for every suite's clients.

use crate::error::BadInput;

/// The `host:port` of a URL on the loopback interface (`127.0.0.1`, `[::1]`, `localhost`), with
/// no user info: every address a case or a core names must be one (docs/security.md).
pub fn loopback_origin(url: &str) -> Result<String, BadInput> {
    let shown = crate::snapshot::contain_text(url);
    let uri: http::Uri = url
        .parse()
        .map_err(|e| format!("`{shown}` is not a URL: {e}"))?;
    let a = uri
        .authority()
        .ok_or_else(|| format!("`{shown}` names no host"))?;
    if a.as_str().contains('@') {
        return Err(BadInput(format!("`{shown}` carries user info")));
    }
    if !matches!(a.host(), "127.0.0.1" | "[::1]" | "::1" | "localhost") {
        return Err(BadInput(format!(
            "`{shown}` is not on the loopback interface"
        )));
    }
    let port = a
        .port_u16()
        .ok_or_else(|| format!("`{shown}` names no port"))?;
    Ok(format!("{}:{port}", a.host()))
}

/// The processes holding a TCP socket that listens on `port` (Linux's `/proc/net/tcp{,6}` and
/// each process's open files; none elsewhere, or where they are another user's): the
/// implementation behind an `http://` or `ws://` runtime, whose waits for a CPU its deadlines
/// do not charge (`sched::Whose`). Read once per runtime: it walks every process's files.
pub fn listeners(port: u16) -> Vec<i32> {
    let inodes: Vec<String> = ["/proc/net/tcp", "/proc/net/tcp6"]
        .iter()
        .filter_map(|f| std::fs::read_to_string(f).ok())
        .flat_map(|table| listening(&table, port))
        .collect();
    if inodes.is_empty() {
        return vec![];
    }
    let wanted: Vec<String> = inodes.iter().map(|i| format!("socket:[{i}]")).collect();
    let Ok(procs) = std::fs::read_dir("/proc") else {
        return vec![];
    };
    let holds = |pid: i32| {
        let Ok(fds) = std::fs::read_dir(format!("/proc/{pid}/fd")) else {
            return false;
        };
        fds.filter_map(|e| std::fs::read_link(e.ok()?.path()).ok())
            .any(|link| wanted.iter().any(|w| link.as_os_str() == w.as_str()))
    };
    procs
        .filter_map(|e| e.ok()?.file_name().to_str()?.parse::<i32>().ok())
        .filter(|&pid| holds(pid))
        .collect()
}

/// The inodes of the sockets a `/proc/net/tcp` table lists as listening (state `0A`) on `port`.
fn listening(table: &str, port: u16) -> Vec<String> {
    table
        .lines()
        .skip(1)
        .filter_map(|line| {
            let f: Vec<&str> = line.split_whitespace().collect();
            let local_port = f.get(1)?.rsplit(':').next()?;
            let ours = u16::from_str_radix(local_port, 16).ok()? == port && *f.get(3)? == "0A";
            ours.then(|| f.get(9).map(|s| s.to_string()))?
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_listening_socket_is_found_by_its_port() {
        let table = "  sl  local_address rem_address   st tx_queue rx_queue tr tm->when retrnsmt   uid  timeout inode\n   0: 0100007F:1F90 00000000:0000 0A 00000000:00000000 00:00000000 00000000  1000        0 4242 1 0 100 0 0 10 0\n   1: 0100007F:1F90 0100007F:C350 01 00000000:00000000 00:00000000 00000000  1000        0 4343 1 0 20 4 30 10 -1\n";
        assert_eq!(listening(table, 8080), vec!["4242".to_string()]);
        assert!(listening(table, 8081).is_empty());
    }

    #[cfg(target_os = "linux")]
    #[test]
    fn this_process_is_found_listening() {
        let l = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
        let port = l.local_addr().unwrap().port();
        assert_eq!(listeners(port), vec![std::process::id() as i32]);
    }
}
