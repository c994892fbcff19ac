//! A scripted server that streams its answers as Server-Sent Events on 127.0.0.1, the way
//! llama.cpp's servers do: each connection gets the next script — events to send, pauses
//! between them — in a chunked body, and the server tells the test when a client closed the
//! connection before the script's end (an abandoned request).

use std::collections::VecDeque;
use std::io::{BufRead, BufReader, ErrorKind, Read, Write};
use std::net::{TcpListener, TcpStream};
use std::sync::mpsc::{self, Receiver, Sender};
use std::sync::{Arc, Mutex};
use std::thread;
use std::time::{Duration, Instant};

use serde_json::{json, Value};

/// One step of a streamed answer.
#[derive(Debug, Clone)]
pub enum Step {
    /// One `data:` event with this JSON.
    Event(Value),
    /// A raw line as it is (e.g. llama-server's `error: {…}`), then a blank line.
    Raw(String),
    /// Nothing for this long (the server is generating, or stuck).
    Pause(Duration),
    /// The connection is dropped here, without the stream's end (llama-cpp-python's stream
    /// when generation fails after its `200`, e.g. a prompt longer than the context).
    Cut,
    /// As the script's only step: a whole JSON answer with this status instead of a stream
    /// (what a server says to the same request without `stream`).
    Whole(u16, Value),
}

pub struct StreamServer {
    port: u16,
    prefix: String,
    requests: Arc<Mutex<Vec<Value>>>,
    closed: Receiver<Instant>,
}

impl StreamServer {
    /// Serves one script per connection, in order (a connection past the last gets none).
    pub fn start(scripts: Vec<Vec<Step>>) -> StreamServer {
        let listener = TcpListener::bind("127.0.0.1:0").unwrap();
        let port = listener.local_addr().unwrap().port();
        let requests = Arc::new(Mutex::new(Vec::new()));
        let scripts = Arc::new(Mutex::new(VecDeque::from(scripts)));
        let (closed_in, closed) = mpsc::channel();
        let requests_in = Arc::clone(&requests);
        thread::spawn(move || {
            for stream in listener.incoming() {
                let Ok(stream) = stream else { continue };
                let script = scripts.lock().unwrap().pop_front().unwrap_or_default();
                let (requests, closed) = (Arc::clone(&requests_in), closed_in.clone());
                thread::spawn(move || serve(stream, script, &requests, &closed));
            }
        });
        StreamServer {
            port,
            prefix: super::unique_prefix(),
            requests,
            closed,
        }
    }

    pub fn base_url(&self) -> String {
        format!("http://127.0.0.1:{}{}/v1", self.port, self.prefix)
    }

    /// The request bodies received so far.
    pub fn requests(&self) -> Vec<Value> {
        self.requests.lock().unwrap().clone()
    }

    /// When a client closed a connection before its script's end, waiting up to `limit`.
    pub fn client_closed_within(&self, limit: Duration) -> Option<Instant> {
        self.closed.recv_timeout(limit).ok()
    }
}

fn serve(
    stream: TcpStream,
    script: Vec<Step>,
    requests: &Mutex<Vec<Value>>,
    closed: &Sender<Instant>,
) {
    let mut writer = stream.try_clone().unwrap();
    let mut reader = BufReader::new(stream);
    let mut length = 0;
    loop {
        let mut line = String::new();
        if reader.read_line(&mut line).unwrap_or(0) == 0 {
            return;
        }
        if line.trim().is_empty() {
            break;
        }
        if let Some((name, value)) = line.split_once(':') {
            if name.trim().eq_ignore_ascii_case("content-length") {
                length = value.trim().parse().unwrap_or(0);
            }
        }
    }
    let mut body = vec![0; length];
    if reader.read_exact(&mut body).is_err() {
        return;
    }
    requests
        .lock()
        .unwrap()
        .push(serde_json::from_slice(&body).unwrap_or(Value::Null));
    if let Some(Step::Whole(status, value)) = script.first() {
        let text = value.to_string();
        let whole = format!(
            "HTTP/1.1 {status} Whole\r\ncontent-type: application/json\r\ncontent-length: {}\r\n\
             connection: close\r\n\r\n{text}",
            text.len()
        );
        let _ = writer.write_all(whole.as_bytes());
        return;
    }
    let head = "HTTP/1.1 200 OK\r\ncontent-type: text/event-stream\r\ncache-control: no-cache\r\n\
                transfer-encoding: chunked\r\nconnection: close\r\n\r\n";
    if writer.write_all(head.as_bytes()).is_err() {
        return;
    }
    let mut stream = reader.into_inner();
    for step in script {
        let text = match step {
            Step::Event(value) => format!("data: {value}\n\n"),
            Step::Raw(line) => format!("{line}\n\n"),
            Step::Whole(..) => continue,
            Step::Cut => {
                let _ = writer.shutdown(std::net::Shutdown::Both);
                return;
            }
            Step::Pause(pause) => {
                // Waits by reading: a client that gives up closes the connection, and the read
                // sees it at once.
                stream.set_read_timeout(Some(pause)).unwrap();
                let mut byte = [0u8; 1];
                match stream.read(&mut byte) {
                    Ok(0) => {
                        let _ = closed.send(Instant::now());
                        return;
                    }
                    Err(e) if matches!(e.kind(), ErrorKind::WouldBlock | ErrorKind::TimedOut) => {
                        continue
                    }
                    _ => {
                        let _ = closed.send(Instant::now());
                        return;
                    }
                }
            }
        };
        let chunk = format!("{:x}\r\n{text}\r\n", text.len());
        if writer
            .write_all(chunk.as_bytes())
            .and_then(|()| writer.flush())
            .is_err()
        {
            let _ = closed.send(Instant::now());
            return;
        }
    }
    let done = "data: [DONE]\n\n";
    let _ = writer.write_all(format!("{:x}\r\n{done}\r\n0\r\n\r\n", done.len()).as_bytes());
}

/// A chunk whose delta is `delta`, with `finish_reason` when given.
pub fn delta(delta: Value, finish_reason: Option<&str>) -> Step {
    Step::Event(json!({
        "object": "chat.completion.chunk",
        "choices": [{"index": 0, "delta": delta, "finish_reason": finish_reason}],
    }))
}

/// The text `text` streamed in pieces of `size` characters, then `finish_reason` and usage.
pub fn text_stream(text: &str, size: usize, finish_reason: &str) -> Vec<Step> {
    let chars: Vec<char> = text.chars().collect();
    let mut steps: Vec<Step> = chars
        .chunks(size.max(1))
        .map(|piece| delta(json!({"content": piece.iter().collect::<String>()}), None))
        .collect();
    steps.push(delta(json!({}), Some(finish_reason)));
    steps.push(usage(1000, chars.len() as u64));
    steps
}

/// The last chunk of a stream asked with `include_usage`.
pub fn usage(prompt: u64, completion: u64) -> Step {
    Step::Event(json!({
        "object": "chat.completion.chunk", "choices": [],
        "usage": {"prompt_tokens": prompt, "completion_tokens": completion},
    }))
}
