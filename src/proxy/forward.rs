//! Plain HTTP through the proxy: one request, forwarded in origin-form, and its response.
//!
//! The upstream gets a head the proxy wrote itself: `METHOD /path HTTP/1.1`, a `Host` built from
//! the checked request-target (RFC 9112 §3.2.2: a proxy ignores the client's `Host` and uses the
//! target's, so a disagreeing `Host` cannot steer a shared upstream to another site), the
//! client's end-to-end fields, framing fields the proxy computed, `Via` and `Connection: close`.
//! The body is relayed by its framing and nothing after it, so bytes the client smuggles behind
//! a body never reach the upstream. The response comes back the same way: interim responses
//! passed on (to HTTP/1.1 clients), hop-by-hop fields dropped, the body re-framed, and
//! `Connection: close`: one request per connection, in both directions.

use std::io::Write as _;
use std::time::Duration;

use super::http::{
    connection_options, is_hop_by_hop, parse_response, response_framing, Field, Framing, RequestHead,
    ResponseHead, Version,
};
use super::meter::{Direction, Meter};
use super::relay::{
    copy_chunked, copy_exact, copy_to_end, send_head, Inbound, Peer, RelayError, Side, Sink, Source,
};
use super::target::Target;

/// Interim responses accepted before the final one.
const MAX_INTERIM: usize = 8;

/// The limits an exchange needs.
#[derive(Debug, Clone, Copy)]
pub struct ExchangeLimits {
    pub max_head: usize,
    pub idle: Duration,
}

/// Forwards `req` (already admitted, with its framing) to the upstream and relays the response.
/// Returns the final status the upstream gave.
pub async fn exchange<CR, CW, UR, UW>(
    req: &RequestHead,
    framing: Framing,
    target: &Target,
    client: &mut Peer<CR, CW>,
    upstream: &mut Peer<UR, UW>,
    limits: ExchangeLimits,
    meter: &Meter<'_>,
) -> Result<u16, RelayError>
where
    CR: Source,
    CW: Sink,
    UR: Source,
    UW: Sink,
{
    let up = async {
        let (src, dst) = (&mut client.input, &mut upstream.output);
        send_head(dst, Direction::Up, &request_head(req, target, framing), meter).await?;
        match framing {
            Framing::Empty | Framing::UntilClose => Ok(()),
            Framing::Length(n) => copy_exact(src, dst, n, Direction::Up, meter).await,
            Framing::Chunked => copy_chunked(src, dst, true, limits.max_head, Direction::Up, meter).await,
        }
    };
    let down = respond(req, &mut upstream.input, &mut client.output, limits.max_head, meter);
    tokio::pin!(up, down);
    let mut sent = false;
    let idle = meter.idle(limits.idle);
    tokio::pin!(idle);
    loop {
        tokio::select! {
            done = &mut up, if !sent => {
                done?;
                sent = true;
            }
            status = &mut down => return status,
            () = &mut idle => return Err(RelayError::Idle(limits.idle)),
        }
    }
}

/// Reads the upstream's response heads and relays them and the final body to the client.
async fn respond<UR, CW>(
    req: &RequestHead,
    upstream: &mut Inbound<UR>,
    client_out: &mut CW,
    max_head: usize,
    meter: &Meter<'_>,
) -> Result<u16, RelayError>
where
    UR: Source,
    CW: Sink,
{
    let client_11 = req.version == Version::Http11;
    for _ in 0..=MAX_INTERIM {
        let head = upstream.read_head(max_head).await?.ok_or(RelayError::Truncated(Side::Upstream))?;
        let resp = parse_response(&head).map_err(|e| RelayError::Http(Side::Upstream, e))?;
        if resp.status == 101 {
            return Err(RelayError::Upgrade);
        }
        if resp.status < 200 {
            if client_11 {
                send_head(client_out, Direction::Down, &interim_head(&resp), meter).await?;
            }
            continue;
        }
        let framing =
            response_framing(&resp, req.method == "HEAD").map_err(|e| RelayError::Http(Side::Upstream, e))?;
        send_head(client_out, Direction::Down, &response_head(&resp, framing, client_11), meter).await?;
        meter.set_status(resp.status);
        match framing {
            Framing::Empty => {}
            Framing::Length(n) => copy_exact(upstream, client_out, n, Direction::Down, meter).await?,
            Framing::Chunked => {
                copy_chunked(upstream, client_out, client_11, max_head, Direction::Down, meter).await?
            }
            Framing::UntilClose => copy_to_end(upstream, client_out, Direction::Down, meter).await?,
        }
        return Ok(resp.status);
    }
    Err(RelayError::Interim)
}

/// The head sent upstream.
fn request_head(req: &RequestHead, target: &Target, framing: Framing) -> Vec<u8> {
    let mut out = Vec::with_capacity(512);
    let _ = write!(out, "{} {} HTTP/1.1\r\nHost: {}\r\n", req.method, target.path, target.authority());
    end_to_end(&mut out, &req.fields, |f| f.is("host"));
    match framing {
        Framing::Length(n) => {
            let _ = write!(out, "Content-Length: {n}\r\n");
        }
        Framing::Chunked => out.extend_from_slice(b"Transfer-Encoding: chunked\r\n"),
        Framing::Empty | Framing::UntilClose => {}
    }
    out.extend_from_slice(b"Via: 1.1 hullward\r\nConnection: close\r\n\r\n");
    out
}

/// The final response head sent to the client.
fn response_head(resp: &ResponseHead, framing: Framing, client_11: bool) -> Vec<u8> {
    let mut out = status_line(resp);
    end_to_end(&mut out, &resp.fields, |_| false);
    match framing {
        // A response without a body (to HEAD, 204, 304) keeps its Content-Length: it describes
        // the representation, not this message.
        Framing::Empty => {
            for f in resp.fields.iter().filter(|f| f.is("content-length")) {
                push_field(&mut out, f);
            }
        }
        Framing::Length(n) => {
            let _ = write!(out, "Content-Length: {n}\r\n");
        }
        Framing::Chunked if client_11 => out.extend_from_slice(b"Transfer-Encoding: chunked\r\n"),
        Framing::Chunked | Framing::UntilClose => {}
    }
    out.extend_from_slice(b"Via: 1.1 hullward\r\nConnection: close\r\n\r\n");
    out
}

fn interim_head(resp: &ResponseHead) -> Vec<u8> {
    let mut out = status_line(resp);
    end_to_end(&mut out, &resp.fields, |_| false);
    out.extend_from_slice(b"\r\n");
    out
}

fn status_line(resp: &ResponseHead) -> Vec<u8> {
    let mut out = Vec::with_capacity(512);
    let _ = write!(out, "HTTP/1.1 {} ", resp.status);
    out.extend_from_slice(&resp.reason);
    out.extend_from_slice(b"\r\n");
    out
}

/// Appends the fields that are not hop-by-hop (nor listed in `Connection`) and not `skip`ped.
fn end_to_end(out: &mut Vec<u8>, fields: &[Field], skip: impl Fn(&Field) -> bool) {
    let options = connection_options(fields);
    for f in fields.iter().filter(|f| !is_hop_by_hop(&f.name, &options) && !skip(f)) {
        push_field(out, f);
    }
}

fn push_field(out: &mut Vec<u8>, f: &Field) {
    out.extend_from_slice(f.name.as_bytes());
    out.extend_from_slice(b": ");
    out.extend_from_slice(&f.value);
    out.extend_from_slice(b"\r\n");
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::proxy::http::{parse_request, request_framing};
    use crate::proxy::target::parse_absolute;

    #[test]
    fn the_upstream_head_is_rebuilt_from_the_target() {
        let req = parse_request(
            b"POST http://registry.example/up?x=1 HTTP/1.1\r\nHost: evil.example\r\nConnection: close, X-Hop\r\nX-Hop: 1\r\nKeep-Alive: 5\r\nProxy-Authorization: Basic eA==\r\nContent-Length: 3\r\nAccept: */*\r\n\r\n",
        )
        .unwrap();
        let target = parse_absolute(&req.target).unwrap();
        let head = request_head(&req, &target, request_framing(&req).unwrap());
        assert_eq!(
            String::from_utf8(head).unwrap(),
            "POST /up?x=1 HTTP/1.1\r\nHost: registry.example\r\nAccept: */*\r\nContent-Length: 3\r\nVia: 1.1 hullward\r\nConnection: close\r\n\r\n"
        );
    }

    #[test]
    fn response_heads_say_close_and_keep_head_lengths() {
        let resp = parse_response(
            b"HTTP/1.1 200 OK\r\nContent-Length: 10\r\nConnection: keep-alive\r\nETag: x\r\n\r\n",
        )
        .unwrap();
        let text = |f, v11| String::from_utf8(response_head(&resp, f, v11)).unwrap();
        assert_eq!(
            text(Framing::Empty, true),
            "HTTP/1.1 200 OK\r\nETag: x\r\nContent-Length: 10\r\nVia: 1.1 hullward\r\nConnection: close\r\n\r\n"
        );
        assert_eq!(
            text(Framing::Chunked, false),
            "HTTP/1.1 200 OK\r\nETag: x\r\nVia: 1.1 hullward\r\nConnection: close\r\n\r\n"
        );
        assert!(text(Framing::Chunked, true).contains("Transfer-Encoding: chunked\r\n"));
    }
}
