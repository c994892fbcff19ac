//! A scripted OpenAI-compatible / Anthropic server on 127.0.0.1 for the native adapter tests:
//! it answers `POST` requests with a fixed sequence of responses (then 500s), `GET …/models`
//! with a fixed model list, and records every request for the test to assert on. HTTP itself
//! comes from the real-agents model server (`tests/real_agents/model_server/http.rs`).

#![allow(dead_code)] // each test binary uses a different subset

#[path = "../real_agents/model_server/http.rs"]
mod http;
pub mod stream;

use std::collections::VecDeque;
use std::net::TcpListener;
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};
use std::thread;
use std::time::Duration;

use serde_json::{json, Value};

pub use http::Response;

/// A path prefix no other server of this test process has had. The native adapter remembers
/// for the rest of the process what a server (by `base_url`) was found to take, so a server on
/// a port an earlier test's server used must not share that earlier server's `base_url`.
pub(crate) fn unique_prefix() -> String {
    static NEXT: AtomicUsize = AtomicUsize::new(0);
    format!("/server-{}", NEXT.fetch_add(1, Ordering::Relaxed))
}

/// One request the server received (its path without the server's [`unique_prefix`]).
#[derive(Debug, Clone)]
pub struct Recorded {
    pub method: String,
    pub path: String,
    pub headers: Vec<(String, String)>,
    pub body: Value,
    /// The body as it came (a protobuf, for the OTLP tests).
    pub raw: Vec<u8>,
}

impl Recorded {
    pub fn header(&self, name: &str) -> Option<&str> {
        self.headers
            .iter()
            .find(|(key, _)| key.eq_ignore_ascii_case(name))
            .map(|(_, value)| value.as_str())
    }
}

pub struct Server {
    port: u16,
    prefix: String,
    requests: Arc<Mutex<Vec<Recorded>>>,
    stop: Arc<AtomicBool>,
}

impl Server {
    /// Serves `script` to `POST` requests in order; `GET …/models` lists `models`.
    pub fn start(script: Vec<Response>, models: &[&str]) -> Server {
        Server::serving(script, Some(models))
    }

    /// Serves `script` to every request in order, whatever its method and path (a scripted
    /// forge API); [`Server::url`] is its root.
    pub fn scripted(script: Vec<Response>) -> Server {
        Server::serving(script, None)
    }

    fn serving(script: Vec<Response>, models: Option<&[&str]>) -> Server {
        let models_listed = models.is_some();
        let models = models.unwrap_or_default();
        let listener = TcpListener::bind("127.0.0.1:0").unwrap();
        let port = listener.local_addr().unwrap().port();
        let prefix = unique_prefix();
        listener.set_nonblocking(true).unwrap();
        let requests = Arc::new(Mutex::new(Vec::new()));
        let stop = Arc::new(AtomicBool::new(false));
        let script = Arc::new(Mutex::new(VecDeque::from(script)));
        let listing = json!({"object": "list", "data": models.iter().map(|m| json!({"id": m})).collect::<Vec<_>>()});
        let (requests_in, stop_in) = (Arc::clone(&requests), Arc::clone(&stop));
        let prefix_in = prefix.clone();
        thread::spawn(move || {
            while !stop_in.load(Ordering::SeqCst) {
                let Ok((stream, _)) = listener.accept() else {
                    thread::sleep(Duration::from_millis(5));
                    continue;
                };
                let (requests, stop, script, listing, prefix) = (
                    Arc::clone(&requests_in),
                    Arc::clone(&stop_in),
                    Arc::clone(&script),
                    listing.clone(),
                    prefix_in.clone(),
                );
                thread::spawn(move || {
                    let _ = http::serve(stream, Duration::from_secs(30), &stop, |request| {
                        requests.lock().unwrap().push(Recorded {
                            method: request.method.clone(),
                            path: request
                                .path
                                .strip_prefix(&prefix)
                                .unwrap_or(&request.path)
                                .to_string(),
                            headers: request.headers.clone(),
                            body: serde_json::from_slice(&request.body).unwrap_or(Value::Null),
                            raw: request.body.clone(),
                        });
                        if models_listed
                            && request.method == "GET"
                            && request.path.ends_with("/models")
                        {
                            return Response::json(200, listing.clone());
                        }
                        script.lock().unwrap().pop_front().unwrap_or_else(|| {
                            Response::json(500, json!({"error": {"message": "script exhausted"}}))
                        })
                    });
                });
            }
        });
        Server {
            port,
            prefix,
            requests,
            stop,
        }
    }

    pub fn base_url(&self) -> String {
        format!("http://127.0.0.1:{}{}/v1", self.port, self.prefix)
    }

    /// The server's root, its unique prefix included.
    pub fn url(&self) -> String {
        format!("http://127.0.0.1:{}{}", self.port, self.prefix)
    }

    /// Every request received so far, in order.
    pub fn requests(&self) -> Vec<Recorded> {
        self.requests.lock().unwrap().clone()
    }

    /// The `POST` requests received so far.
    pub fn posts(&self) -> Vec<Recorded> {
        self.requests
            .lock()
            .unwrap()
            .iter()
            .filter(|r| r.method == "POST")
            .cloned()
            .collect()
    }
}

impl Drop for Server {
    fn drop(&mut self) {
        self.stop.store(true, Ordering::SeqCst);
    }
}

/// A chat completion that answers with text.
pub fn openai_text(text: &str) -> Response {
    Response::json(
        200,
        json!({
            "choices": [{"index": 0, "finish_reason": "stop", "message": {"role": "assistant", "content": text}}],
            "usage": {"prompt_tokens": 1000, "completion_tokens": 100},
        }),
    )
}

/// A chat completion with nothing in it, as llama-cpp-python sends it for a model whose chat
/// template makes it stop at once: `content: ""`, `finish_reason: "stop"`, 0 tokens.
pub fn openai_nothing() -> Response {
    Response::json(
        200,
        json!({
            "choices": [{"index": 0, "finish_reason": "stop", "message": {"role": "assistant", "content": ""}}],
            "usage": {"prompt_tokens": 480, "completion_tokens": 0},
        }),
    )
}

/// A chat completion that calls tools: (name, arguments as the model wrote them).
pub fn openai_calls(calls: &[(&str, &str)]) -> Response {
    let tool_calls: Vec<Value> = calls
        .iter()
        .enumerate()
        .map(|(i, (name, arguments))| {
            json!({"id": format!("call_{i}"), "type": "function", "function": {"name": name, "arguments": arguments}})
        })
        .collect();
    Response::json(
        200,
        json!({
            "choices": [{"index": 0, "finish_reason": "tool_calls", "message": {"role": "assistant", "content": null, "tool_calls": tool_calls}}],
            "usage": {"prompt_tokens": 1000, "completion_tokens": 100},
        }),
    )
}

/// A Messages answer with text.
pub fn anthropic_text(text: &str) -> Response {
    Response::json(
        200,
        json!({
            "type": "message", "role": "assistant", "stop_reason": "end_turn",
            "content": [{"type": "text", "text": text}],
            "usage": {"input_tokens": 1000, "output_tokens": 100},
        }),
    )
}

/// A Messages answer that uses tools: (name, input).
pub fn anthropic_calls(calls: &[(&str, Value)]) -> Response {
    let blocks: Vec<Value> = calls
        .iter()
        .enumerate()
        .map(|(i, (name, input))| json!({"type": "tool_use", "id": format!("toolu_{i}"), "name": name, "input": input}))
        .collect();
    Response::json(
        200,
        json!({
            "type": "message", "role": "assistant", "stop_reason": "tool_use",
            "content": blocks,
            "usage": {"input_tokens": 1000, "output_tokens": 100},
        }),
    )
}

/// An error answer in the APIs' format.
pub fn error(status: u16, message: &str) -> Response {
    Response::json(
        status,
        json!({"error": {"message": message, "type": "error"}}),
    )
}

/// The last line of a transcript whose `event` is `event`, and all of them.
pub fn transcript_events(path: &Path, event: &str) -> Vec<Value> {
    std::fs::read_to_string(path)
        .unwrap_or_default()
        .lines()
        .map(|line| serde_json::from_str::<Value>(line).unwrap())
        .filter(|value| value["event"] == event)
        .collect()
}

/// A temporary directory with a worktree and a run directory.
pub struct Dirs {
    _dir: tempfile::TempDir,
    pub root: PathBuf,
    pub worktree: PathBuf,
    pub run_dir: PathBuf,
}

impl Dirs {
    pub fn new() -> Dirs {
        let dir = tempfile::tempdir().unwrap();
        let root = std::fs::canonicalize(dir.path()).unwrap();
        let worktree = root.join("worktree");
        let run_dir = root.join("run");
        std::fs::create_dir_all(&worktree).unwrap();
        std::fs::create_dir_all(&run_dir).unwrap();
        Dirs {
            _dir: dir,
            root,
            worktree,
            run_dir,
        }
    }
}
