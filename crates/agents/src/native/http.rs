//! One HTTP exchange under the role's bounds.
//!
//! ureq is blocking, so each request runs on its own thread while the caller polls the cancel
//! token, the role's deadline and the idle watchdog, like `process::run` polls a child. Every
//! part of the body that arrives is a sign of life: a streamed answer (module `stream`) keeps
//! the watchdog quiet while tokens come. A request still running when a bound fires is
//! abandoned *and its connection closed* (`ureq::Agent::shutdown`), so a server generating for
//! it sees the close and stops, instead of keeping the model busy for an answer nobody reads;
//! the invocation ends as cancelled, timed out or idle. A response of any status is returned
//! to the caller, which classifies it (module `failure`).

use std::io::Read;
use std::sync::mpsc;
use std::thread;
use std::time::{Duration, Instant};

use super::http_error::HttpError;
use process::CancelToken;

/// The largest response body read.
const MAX_BODY: u64 = 64 * 1024 * 1024;
/// How often a waiting caller looks at the cancel token and its bounds.
const POLL: Duration = Duration::from_millis(20);
/// The request thread's own timeout is this much longer than the caller's bound, so the
/// caller, which knows which bound it was, sees it first.
const SLACK: Duration = Duration::from_secs(1);

/// What ended a wait before the answer came.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Stop {
    Cancelled,
    TimedOut,
    /// Nothing arrived for the role's `idle_timeout`.
    IdleTimedOut,
}

/// The limits of one invocation.
#[derive(Debug, Clone, Copy)]
pub struct Bounds {
    pub deadline: Instant,
    /// Nothing received for this long ends the invocation.
    pub idle: Option<Duration>,
}

impl Bounds {
    /// Which bound, if any, stops the invocation now; `since` is its last sign of life.
    pub fn check(&self, cancel: &CancelToken, since: Instant) -> Option<Stop> {
        if cancel.is_cancelled() {
            Some(Stop::Cancelled)
        } else if Instant::now() >= self.deadline {
            Some(Stop::TimedOut)
        } else if self.idle.is_some_and(|idle| since.elapsed() >= idle) {
            Some(Stop::IdleTimedOut)
        } else {
            None
        }
    }

    pub fn left(&self) -> Duration {
        self.deadline.saturating_duration_since(Instant::now())
    }
}

/// An answer with its status, whatever the status.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Answer {
    pub status: u16,
    pub body: String,
    /// `Retry-After` in seconds, when given.
    pub retry_after: Option<Duration>,
    /// The media type (`application/json`, `text/event-stream`), when given.
    pub content_type: Option<String>,
    /// Why the body ended before the server finished it (the connection broke, as
    /// llama-cpp-python's does when a streamed request fails after its `200`): `body` is what
    /// had arrived.
    pub cut: Option<String>,
}

/// Why no answer came.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Failure {
    Stopped(Stop),
    /// The connection failed or broke (the server is not running, a TLS or DNS error).
    Transport(HttpError),
}

/// A request to send: a `GET` without a body; with one, `POST`, `PATCH` or `PUT` (by
/// `method`).
#[derive(Debug, Clone)]
pub struct Request {
    pub method: &'static str,
    pub url: String,
    pub headers: Vec<(String, String)>,
    pub body: Option<Body>,
}

/// A request's body and its media type.
#[derive(Debug, Clone)]
pub struct Body {
    pub bytes: Vec<u8>,
    pub content_type: &'static str,
}

impl Body {
    pub fn json(text: String) -> Body {
        Body {
            bytes: text.into_bytes(),
            content_type: "application/json",
        }
    }
}

/// What the request thread tells the waiting caller.
enum Event {
    /// Part of the answer arrived.
    Alive,
    Done(Result<Answer, HttpError>),
}

/// Sends `request` and waits for its answer within `bounds`; the idle watchdog restarts
/// whenever part of the answer arrives.
pub fn exchange(
    request: Request,
    bounds: &Bounds,
    cancel: &CancelToken,
) -> Result<Answer, Failure> {
    let started = Instant::now();
    if let Some(stop) = bounds.check(cancel, started) {
        return Err(Failure::Stopped(stop));
    }
    let agent = agent_for(&request.url, bounds.left() + SLACK);
    let worker = agent.clone();
    let (sender, receiver) = mpsc::channel();
    thread::Builder::new()
        .name("native-http".to_string())
        .spawn(move || {
            // The caller may have stopped waiting; nobody is left to tell.
            let result = send_with(&worker, &request, &mut || {
                let _ = sender.send(Event::Alive);
            });
            let _ = sender.send(Event::Done(result));
        })
        .map_err(|e| Failure::Transport(HttpError::Thread(e.to_string())))?;
    let mut since = started;
    loop {
        match receiver.recv_timeout(POLL) {
            Ok(Event::Alive) => since = Instant::now(),
            // A request that failed as a bound ran out failed because of the bound.
            Ok(Event::Done(result)) => {
                return result.map_err(|problem| match bounds.check(cancel, since) {
                    Some(stop) => Failure::Stopped(stop),
                    None => Failure::Transport(problem),
                })
            }
            Err(mpsc::RecvTimeoutError::Disconnected) => {
                return Err(Failure::Transport(HttpError::ThreadEnded))
            }
            Err(mpsc::RecvTimeoutError::Timeout) => {}
        }
        if let Some(stop) = bounds.check(cancel, since) {
            // Closes the connection: the request thread's read fails at once.
            agent.shutdown();
            return Err(Failure::Stopped(stop));
        }
    }
}

/// Sends one request, blocking, with `limit` for the whole exchange.
pub fn send(request: &Request, limit: Duration) -> Result<Answer, HttpError> {
    send_with(&agent_for(&request.url, limit), request, &mut || {})
}

/// An agent for one exchange with `limit` for all of it. A proxy from the environment
/// (`HTTPS_PROXY`, `NO_PROXY`, …) is used, except for a server on this machine, which a proxy
/// cannot reach.
fn agent_for(url: &str, limit: Duration) -> ureq::Agent {
    let mut config = ureq::Agent::config_builder()
        .http_status_as_error(false)
        .timeout_global(Some(limit.max(Duration::from_millis(1))));
    if is_loopback(url) {
        config = config.proxy(None);
    }
    config.build().into()
}

/// Sends `request` with `agent`, calling `alive` as each part of the body arrives.
fn send_with(
    agent: &ureq::Agent,
    request: &Request,
    alive: &mut dyn FnMut(),
) -> Result<Answer, HttpError> {
    let result = match &request.body {
        Some(body) => {
            let builder = match request.method {
                "PATCH" => agent.patch(&request.url),
                "PUT" => agent.put(&request.url),
                _ => agent.post(&request.url),
            };
            let mut builder = builder.header("content-type", body.content_type);
            for (name, value) in &request.headers {
                builder = builder.header(name.as_str(), value.as_str());
            }
            builder.send(&body.bytes[..])
        }
        None => {
            let mut builder = agent.get(&request.url);
            for (name, value) in &request.headers {
                builder = builder.header(name.as_str(), value.as_str());
            }
            builder.call()
        }
    };
    let mut response = result.map_err(|e| HttpError::Request {
        method: request.method,
        url: request.url.clone(),
        why: e.to_string(),
    })?;
    alive();
    let status = response.status().as_u16();
    let header = |name: &str| {
        response
            .headers()
            .get(name)
            .and_then(|value| value.to_str().ok())
            .map(str::to_string)
    };
    let retry_after = header("retry-after")
        .and_then(|value| value.trim().parse::<u64>().ok())
        .map(Duration::from_secs);
    let content_type = header("content-type").map(|value| {
        let media = value.split(';').next().unwrap_or_default();
        media.trim().to_ascii_lowercase()
    });
    let reading = |e: &dyn std::fmt::Display| HttpError::Reading {
        url: request.url.clone(),
        why: e.to_string(),
    };
    let mut reader = response.body_mut().with_config().limit(MAX_BODY).reader();
    let mut bytes = Vec::new();
    let mut chunk = [0u8; 16 * 1024];
    let mut cut = None;
    loop {
        match reader.read(&mut chunk) {
            Ok(0) => break,
            Ok(read) => {
                bytes.extend_from_slice(&chunk[..read]);
                alive();
            }
            // A stream cut short is still an answer: what arrived says how far it got.
            Err(e) if content_type.as_deref() == Some("text/event-stream") => {
                cut = Some(reading(&e).to_string());
                break;
            }
            Err(e) => return Err(reading(&e)),
        }
    }
    let body = match String::from_utf8(bytes) {
        Ok(body) => body,
        Err(e) if cut.is_some() => String::from_utf8_lossy(e.as_bytes()).into_owned(),
        Err(e) => return Err(reading(&e)),
    };
    Ok(Answer {
        status,
        body,
        retry_after,
        content_type,
        cut,
    })
}

/// Whether something accepts a TCP connection at the host and port of `url` within
/// `timeout` (each address it resolves to is tried); nothing is sent.
pub fn connect_probe(url: &str, timeout: Duration) -> Result<(), HttpError> {
    use std::net::{TcpStream, ToSocketAddrs};
    let uri = url
        .parse::<ureq::http::Uri>()
        .map_err(|e| HttpError::NotAUrl {
            url: url.to_string(),
            why: e.to_string(),
        })?;
    let host = uri
        .host()
        .ok_or_else(|| HttpError::NoHost(url.to_string()))?;
    let host = host.trim_start_matches('[').trim_end_matches(']');
    let port = uri.port_u16().unwrap_or(match uri.scheme_str() {
        Some("https") => 443,
        _ => 80,
    });
    let addresses = (host, port)
        .to_socket_addrs()
        .map_err(|e| HttpError::Unresolvable {
            host: host.to_string(),
            why: e.to_string(),
        })?;
    let mut last = HttpError::NoAddress {
        host: host.to_string(),
        port,
    };
    for address in addresses {
        match TcpStream::connect_timeout(&address, timeout) {
            Ok(_) => return Ok(()),
            Err(e) => {
                last = HttpError::NotListening {
                    address,
                    why: e.to_string(),
                }
            }
        }
    }
    Err(last)
}

/// Whether `url` names this machine (`localhost`, `127.0.0.1`, `[::1]`, …).
pub fn is_loopback(url: &str) -> bool {
    let Ok(uri) = url.parse::<ureq::http::Uri>() else {
        return false;
    };
    let Some(host) = uri.host() else {
        return false;
    };
    host.eq_ignore_ascii_case("localhost")
        || host
            .trim_start_matches('[')
            .trim_end_matches(']')
            .parse::<std::net::IpAddr>()
            .is_ok_and(|ip| ip.is_loopback())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn servers_on_this_machine_are_loopback() {
        assert!(is_loopback("http://127.0.0.1:11434/v1/models"));
        assert!(is_loopback("http://localhost:8080/v1"));
        assert!(is_loopback("http://[::1]:8000/v1"));
        assert!(!is_loopback("https://api.openai.com/v1"));
        assert!(!is_loopback("not a url"));
    }

    #[test]
    fn the_connect_probe_tells_a_listening_port_from_a_closed_one() {
        let listener = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
        let open = format!("http://{}/v1", listener.local_addr().unwrap());
        assert_eq!(connect_probe(&open, Duration::from_secs(1)), Ok(()));
        drop(listener);
        let problem = connect_probe(&open, Duration::from_secs(1)).unwrap_err();
        assert!(
            matches!(&problem, HttpError::NotListening { address, .. } if address.ip().is_loopback()),
            "{problem}"
        );
    }

    #[test]
    fn a_bound_stops_a_wait_in_order_cancel_deadline_idle() {
        let cancel = CancelToken::new();
        let now = Instant::now();
        let open = Bounds {
            deadline: now + Duration::from_secs(60),
            idle: Some(Duration::from_secs(60)),
        };
        assert_eq!(open.check(&cancel, now), None);
        let idle = Bounds {
            idle: Some(Duration::ZERO),
            ..open
        };
        assert_eq!(idle.check(&cancel, now), Some(Stop::IdleTimedOut));
        let late = Bounds {
            deadline: now,
            ..idle
        };
        assert_eq!(late.check(&cancel, now), Some(Stop::TimedOut));
        cancel.cancel();
        assert_eq!(late.check(&cancel, now), Some(Stop::Cancelled));
    }
}
