//! A scripted model server for the real `claude` and `codex` CLIs: a small HTTP/1.1 server on
//! 127.0.0.1 that speaks enough of the Anthropic Messages API ([`anthropic`]) and of the OpenAI
//! Responses API ([`openai`]), both streaming, for the real CLIs to run a whole session against
//! it.
//!
//! Which answer a request gets comes from the request itself, so retries and extra requests
//! never shift the script: the role and the autobuild turn from the rendered prompt ("You are
//! the **Player**…", "This is turn N"), the step from the conversation so far (the number of
//! model answers already in it). A [`Script`] holds, per role and turn, the HTTP errors to
//! answer first and then one [`Step`] per model answer.
//!
//! Every request is logged (in memory for the test's assertions, and as JSON lines in
//! `requests.jsonl`). The server only listens on 127.0.0.1, answers at most [`MAX_REQUESTS`]
//! requests, and stops by itself after [`LIFETIME`] or when dropped.

pub mod anthropic;
mod http;
pub mod openai;

use std::collections::HashMap;
use std::fs::{self, File, OpenOptions};
use std::io::Write;
use std::net::{SocketAddr, TcpListener};
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex};
use std::thread::{self, JoinHandle};
use std::time::{Duration, Instant};

use serde_json::{json, Value};

use http::{Request, Response};

/// The server stops accepting connections after this long, whatever the test does.
pub const LIFETIME: Duration = Duration::from_secs(600);
/// Requests answered in all; later ones get a 503.
pub const MAX_REQUESTS: usize = 400;
/// A connection with no request for this long is closed.
const IDLE: Duration = Duration::from_secs(60);

/// Which autobuild role a conversation belongs to, from its prompt.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Role {
    Player,
    Coach,
}

impl Role {
    pub fn name(self) -> &'static str {
        match self {
            Role::Player => "player",
            Role::Coach => "coach",
        }
    }
}

/// One answer of the model.
#[derive(Debug, Clone)]
pub enum Step {
    /// A final text answer: the session ends.
    Text(String),
    /// One tool call: the CLI runs the tool and asks again with its result.
    Tool { name: String, input: Value },
}

pub fn text(text: &str) -> Step {
    Step::Text(text.to_string())
}

pub fn tool(name: &str, input: Value) -> Step {
    Step::Tool {
        name: name.to_string(),
        input,
    }
}

/// An HTTP error answer, in the API's own error format.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Failure {
    /// 401: the key is not accepted.
    Unauthorized,
    /// 429: rate limited.
    RateLimited,
}

/// What the model does in one agent invocation: errors for the first requests, then the steps.
#[derive(Debug, Clone, Default)]
pub struct Session {
    pub failures: Vec<Failure>,
    pub steps: Vec<Step>,
}

/// The model's answers for every role and turn of a run.
#[derive(Debug, Clone, Default)]
pub struct Script {
    sessions: HashMap<(Role, u32), Session>,
    /// Answered to every API request instead of the script (a revoked key fails them all).
    always: Option<Failure>,
}

impl Script {
    pub fn new() -> Script {
        Script::default()
    }

    /// The steps of `role` in autobuild turn `turn`.
    pub fn steps(mut self, role: Role, turn: u32, steps: Vec<Step>) -> Script {
        self.sessions.entry((role, turn)).or_default().steps = steps;
        self
    }

    /// HTTP errors answered, in order, to the first requests of `role` in `turn`.
    pub fn failures(mut self, role: Role, turn: u32, failures: Vec<Failure>) -> Script {
        self.sessions.entry((role, turn)).or_default().failures = failures;
        self
    }

    /// Every API request fails with `failure`.
    pub fn failing_every_request(mut self, failure: Failure) -> Script {
        self.always = Some(failure);
        self
    }
}

/// One request as the server saw it, and what it answered.
#[derive(Debug, Clone)]
pub struct Logged {
    pub method: String,
    pub path: String,
    pub role: Option<Role>,
    pub turn: Option<u32>,
    pub step: Option<usize>,
    /// `text`, `tool <name>`, an HTTP status, or what else was answered.
    pub answer: String,
    pub body: Value,
}

impl Logged {
    pub fn is(&self, role: Role, turn: u32) -> bool {
        self.role == Some(role) && self.turn == Some(turn)
    }

    /// Every text of the conversation's user messages (the prompt, and the CLI's context).
    pub fn user_text(&self) -> String {
        if self.path.contains("/responses") {
            openai::user_text(&self.body)
        } else {
            anthropic::user_text(&self.body)
        }
    }

    /// The results of the tool calls so far, as the CLI reported them to the model.
    pub fn tool_results(&self) -> Vec<String> {
        if self.path.contains("/responses") {
            openai::tool_results(&self.body)
        } else {
            anthropic::tool_results(&self.body)
        }
    }

    /// The names of the tools the CLI offered the model.
    pub fn tool_names(&self) -> Vec<String> {
        let tools = self.body["tools"].as_array().cloned().unwrap_or_default();
        tools
            .iter()
            .filter_map(|tool| tool["name"].as_str().map(str::to_string))
            .collect()
    }
}

struct State {
    script: Script,
    failures_served: HashMap<(Role, u32), usize>,
    log: Vec<Logged>,
    log_file: Option<File>,
}

/// The running server; stops when dropped.
pub struct ModelServer {
    addr: SocketAddr,
    state: Arc<Mutex<State>>,
    stop: Arc<AtomicBool>,
    accept: Option<JoinHandle<()>>,
    log_path: PathBuf,
}

impl ModelServer {
    /// Starts the server on an ephemeral port of 127.0.0.1; requests are logged to
    /// `log_dir/requests.jsonl`.
    pub fn start(script: Script, log_dir: &Path) -> ModelServer {
        fs::create_dir_all(log_dir).unwrap();
        let log_path = log_dir.join("requests.jsonl");
        let log_file = OpenOptions::new()
            .create(true)
            .append(true)
            .open(&log_path)
            .ok();
        let listener = TcpListener::bind(("127.0.0.1", 0)).expect("bind 127.0.0.1");
        listener.set_nonblocking(true).unwrap();
        let addr = listener.local_addr().unwrap();
        let state = Arc::new(Mutex::new(State {
            script,
            failures_served: HashMap::new(),
            log: Vec::new(),
            log_file,
        }));
        let stop = Arc::new(AtomicBool::new(false));
        let accept = {
            let state = Arc::clone(&state);
            let stop = Arc::clone(&stop);
            thread::spawn(move || accept_loop(&listener, &state, &stop))
        };
        ModelServer {
            addr,
            state,
            stop,
            accept: Some(accept),
            log_path,
        }
    }

    /// `http://127.0.0.1:PORT`.
    pub fn url(&self) -> String {
        format!("http://{}", self.addr)
    }

    pub fn log_path(&self) -> &Path {
        &self.log_path
    }

    /// Every request so far.
    pub fn requests(&self) -> Vec<Logged> {
        self.state.lock().unwrap().log.clone()
    }

    /// The requests of `role` in autobuild turn `turn`, in order.
    pub fn requests_of(&self, role: Role, turn: u32) -> Vec<Logged> {
        let log = self.requests();
        log.into_iter().filter(|r| r.is(role, turn)).collect()
    }

    /// A one-line-per-request summary, for failure messages.
    pub fn summary(&self) -> String {
        self.requests()
            .iter()
            .map(|r| {
                format!(
                    "{} {} role={:?} turn={:?} step={:?} -> {}",
                    r.method, r.path, r.role, r.turn, r.step, r.answer
                )
            })
            .collect::<Vec<_>>()
            .join("\n")
    }
}

impl Drop for ModelServer {
    fn drop(&mut self) {
        self.stop.store(true, Ordering::SeqCst);
        if let Some(accept) = self.accept.take() {
            let _ = accept.join();
        }
    }
}

fn accept_loop(listener: &TcpListener, state: &Arc<Mutex<State>>, stop: &Arc<AtomicBool>) {
    let started = Instant::now();
    while !stop.load(Ordering::SeqCst) && started.elapsed() < LIFETIME {
        match listener.accept() {
            Ok((stream, peer)) => {
                if !peer.ip().is_loopback() {
                    continue; // cannot happen on a 127.0.0.1 listener; never served
                }
                let state = Arc::clone(state);
                let stop = Arc::clone(stop);
                thread::spawn(move || {
                    let _ = http::serve(stream, IDLE, &stop, |request| answer(&state, request));
                });
            }
            Err(e) if e.kind() == std::io::ErrorKind::WouldBlock => {
                thread::sleep(Duration::from_millis(20));
            }
            Err(_) => thread::sleep(Duration::from_millis(20)),
        }
    }
}

/// The protocol a request speaks, from its path.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Api {
    Anthropic,
    OpenAi,
}

fn api_of(request: &Request) -> Option<Api> {
    let path = request.path.split('?').next().unwrap_or("");
    match (request.method.as_str(), path) {
        ("POST", "/v1/messages") => Some(Api::Anthropic),
        ("POST", "/v1/responses") => Some(Api::OpenAi),
        _ => None,
    }
}

fn answer(state: &Arc<Mutex<State>>, request: &Request) -> Response {
    let body: Value = serde_json::from_slice(&request.body).unwrap_or(Value::Null);
    let mut state = state.lock().unwrap();
    let mut logged = Logged {
        method: request.method.clone(),
        path: request.path.clone(),
        role: None,
        turn: None,
        step: None,
        answer: String::new(),
        body: body.clone(),
    };
    let response = if state.log.len() >= MAX_REQUESTS {
        logged.answer = "503 (request limit)".into();
        Response::json(
            503,
            json!({"error": "the scripted model server's request limit"}),
        )
    } else {
        route(&mut state, request, &body, &mut logged)
    };
    if let Some(file) = state.log_file.as_mut() {
        let line = json!({
            "method": logged.method, "path": logged.path,
            "role": logged.role.map(Role::name), "turn": logged.turn, "step": logged.step,
            "answer": logged.answer, "body": logged.body,
        });
        let _ = writeln!(file, "{line}");
    }
    state.log.push(logged);
    response
}

fn route(state: &mut State, request: &Request, body: &Value, logged: &mut Logged) -> Response {
    let path = request.path.split('?').next().unwrap_or("");
    if request.method == "POST" && path == "/v1/messages/count_tokens" {
        logged.answer = "count_tokens".into();
        return Response::json(200, json!({"input_tokens": 100}));
    }
    let Some(api) = api_of(request) else {
        // Connectivity probes (`HEAD /`) and anything else the CLIs may try.
        logged.answer = if request.method == "HEAD" {
            "200 (probe)".into()
        } else {
            "404".into()
        };
        let status = if request.method == "HEAD" { 200 } else { 404 };
        return Response::json(status, json!({}));
    };
    let user_text = match api {
        Api::Anthropic => anthropic::user_text(body),
        Api::OpenAi => openai::user_text(body),
    };
    let Some((role, turn)) = role_and_turn(&user_text) else {
        // Not one of autobuild's sessions (e.g. a side request of the CLI): a plain answer.
        logged.answer = "text (not an autobuild prompt)".into();
        return render(api, body, &text("OK"), 0);
    };
    let step = match api {
        Api::Anthropic => anthropic::step_of(body),
        Api::OpenAi => openai::step_of(body),
    };
    logged.role = Some(role);
    logged.turn = Some(turn);
    logged.step = Some(step);
    if let Some(failure) = state.script.always {
        return fail(api, failure, logged);
    }
    let session = state
        .script
        .sessions
        .get(&(role, turn))
        .cloned()
        .unwrap_or_default();
    let served = state.failures_served.entry((role, turn)).or_insert(0);
    if step == 0 && *served < session.failures.len() {
        let failure = session.failures[*served];
        *served += 1;
        return fail(api, failure, logged);
    }
    let scripted = session.steps.get(step).cloned();
    let reply = scripted.unwrap_or_else(|| {
        text(&format!(
            "(the scripted model has no step {step} for the {} in turn {turn})",
            role.name()
        ))
    });
    logged.answer = match &reply {
        Step::Text(_) => "text".to_string(),
        Step::Tool { name, .. } => format!("tool {name}"),
    };
    render(api, body, &reply, step)
}

fn fail(api: Api, failure: Failure, logged: &mut Logged) -> Response {
    let response = match api {
        Api::Anthropic => anthropic::failure(failure),
        Api::OpenAi => openai::failure(failure),
    };
    logged.answer = response.status.to_string();
    response
}

fn render(api: Api, body: &Value, step: &Step, index: usize) -> Response {
    let model = body["model"].as_str().unwrap_or("scripted-model");
    let streaming = body["stream"].as_bool().unwrap_or(false);
    match api {
        Api::Anthropic if streaming => Response::sse(anthropic::stream(model, step, index)),
        Api::Anthropic => Response::json(200, anthropic::message(model, step, index)),
        Api::OpenAi => Response::sse(openai::stream(model, step, index)),
    }
}

/// The role and the autobuild turn of a conversation, from autobuild's rendered prompt
/// (prompts/player.md and prompts/coach.md).
pub fn role_and_turn(user_text: &str) -> Option<(Role, u32)> {
    let role = if user_text.contains("You are the **Player**") {
        Role::Player
    } else if user_text.contains("You are the **Coach**") {
        Role::Coach
    } else {
        return None;
    };
    let after = user_text.split("This is turn ").nth(1)?;
    let digits: String = after.chars().take_while(char::is_ascii_digit).collect();
    Some((role, digits.parse().ok()?))
}

/// Server-sent events: `event: TYPE` and `data: JSON` for each event.
pub fn sse(events: &[Value]) -> Vec<u8> {
    let mut out = Vec::new();
    for event in events {
        let kind = event["type"].as_str().unwrap_or("message");
        out.extend_from_slice(format!("event: {kind}\ndata: {event}\n\n").as_bytes());
    }
    out
}
