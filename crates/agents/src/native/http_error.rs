//! Why an HTTP exchange with an endpoint brought no answer, or a connection probe found no
//! server: one variant per problem, worded once. The words of the HTTP client and of the
//! operating system are kept as text, so the error can be compared and cloned into records.

use std::net::SocketAddr;

#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum HttpError {
    /// The request could not be sent or got no response (connection, TLS, DNS, timeout).
    #[error("{method} {url}: {why}")]
    Request {
        method: &'static str,
        url: String,
        why: String,
    },
    /// The response body could not be read.
    #[error("reading the answer of {url}: {why}")]
    Reading { url: String, why: String },
    /// The thread that makes the request could not be started.
    #[error("cannot start the request thread: {0}")]
    Thread(String),
    /// The request thread ended without saying how the request went.
    #[error("the request thread ended early")]
    ThreadEnded,
    /// `url` does not parse as a URL.
    #[error("`{url}` is not a URL ({why})")]
    NotAUrl { url: String, why: String },
    #[error("`{0}` names no host")]
    NoHost(String),
    #[error("cannot resolve {host}: {why}")]
    Unresolvable { host: String, why: String },
    #[error("{host}:{port} resolves to no address")]
    NoAddress { host: String, port: u16 },
    /// The last address tried refused the connection or did not answer.
    #[error("nothing accepts connections at {address} ({why})")]
    NotListening { address: SocketAddr, why: String },
}
