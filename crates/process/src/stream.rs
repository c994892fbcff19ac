//! Draining a child's stdout and stderr into the transcript without ever blocking the child.
//!
//! Each stream has its own thread, so a child that floods stderr while we wait on stdout (or
//! the reverse) never fills a pipe and deadlocks. Output is cut into lines, redacted, and
//! appended to one combined transcript file, flushed after every read so the log can be
//! followed live. A line has no length limit in the file; in memory at most [`MAX_PENDING`]
//! bytes of an unfinished line are held, and each stream keeps only a bounded excerpt
//! (the head of stdout for the final message, the tail of stderr for error messages).

use std::fs::File;
use std::io::{self, BufWriter, Read, Write};
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::mpsc::{self, Receiver, RecvTimeoutError};
use std::sync::{Arc, Mutex, MutexGuard, PoisonError};
use std::thread::{self, JoinHandle};
use std::time::{Duration, Instant};

use base::text::{ceil_char_boundary, floor_char_boundary};

use super::redact::Redactor;
use super::{LineSignal, LineWatch};

/// An unfinished line longer than this is written out in pieces.
const MAX_PENDING: usize = 1 << 20;

const READ_CHUNK: usize = 64 * 1024;

/// The combined, redacted transcript of one process.
pub(super) struct Transcript {
    path: PathBuf,
    file: Mutex<TranscriptFile>,
}

struct TranscriptFile {
    writer: BufWriter<File>,
    /// The first write error; later writes are skipped so the child keeps being drained.
    error: Option<io::Error>,
}

impl Transcript {
    /// Creates (truncates) the transcript file, creating its directory.
    pub(super) fn create(path: &Path) -> io::Result<Transcript> {
        if let Some(dir) = path.parent() {
            std::fs::create_dir_all(dir)?;
        }
        let file = File::create(path)?;
        Ok(Transcript {
            path: path.to_path_buf(),
            file: Mutex::new(TranscriptFile {
                writer: BufWriter::new(file),
                error: None,
            }),
        })
    }

    fn lock(&self) -> MutexGuard<'_, TranscriptFile> {
        self.file.lock().unwrap_or_else(PoisonError::into_inner)
    }

    fn write_all(&self, pieces: &[String]) {
        let mut file = self.lock();
        if file.error.is_some() {
            return;
        }
        let result = pieces
            .iter()
            .try_for_each(|piece| file.writer.write_all(piece.as_bytes()))
            .and_then(|()| file.writer.flush());
        if let Err(error) = result {
            file.error = Some(error);
        }
    }

    /// Flushes the file; describes the first write error, if any happened.
    pub(super) fn finish(&self) -> Option<String> {
        let mut file = self.lock();
        if file.error.is_none() {
            if let Err(error) = file.writer.flush() {
                file.error = Some(error);
            }
        }
        file.error
            .as_ref()
            .map(|error| format!("writing {}: {error}", self.path.display()))
    }
}

/// When the child last made progress, for the idle watchdog, and whether its output said it
/// cannot succeed.
pub(super) struct Activity {
    start: Instant,
    last_output_ms: AtomicU64,
    hopeless: AtomicBool,
}

impl Activity {
    pub(super) fn new(start: Instant) -> Activity {
        Activity {
            start,
            last_output_ms: AtomicU64::new(0),
            hopeless: AtomicBool::new(false),
        }
    }

    /// Whether a watched line said the child cannot succeed.
    pub(super) fn is_hopeless(&self) -> bool {
        self.hopeless.load(Ordering::Relaxed)
    }

    /// Notes what a piece of output says when its lines are judged: a whole line (ending in a
    /// newline) as the watch says; a slice of a line too long to hold counts as progress (data
    /// is flowing). Unjudged output is noted per read, partial lines included.
    fn saw(&self, piece: &str, touch: &Touch) {
        match touch {
            Touch::Never | Touch::Always => {}
            Touch::Judged(watch) => {
                let Some(line) = piece.strip_suffix('\n') else {
                    self.touch();
                    return;
                };
                match watch.judge(line.trim_end_matches('\r')) {
                    LineSignal::Progress => self.touch(),
                    LineSignal::Waiting => {}
                    LineSignal::Hopeless => self.hopeless.store(true, Ordering::Relaxed),
                }
            }
        }
    }

    fn touch(&self) {
        let elapsed = u64::try_from(self.start.elapsed().as_millis()).unwrap_or(u64::MAX);
        self.last_output_ms.store(elapsed, Ordering::Relaxed);
    }

    /// How long the child has printed nothing.
    pub(super) fn idle_for(&self) -> Duration {
        let last = Duration::from_millis(self.last_output_ms.load(Ordering::Relaxed));
        self.start.elapsed().saturating_sub(last)
    }
}

/// Which output of a stream counts as progress for the idle watchdog.
#[derive(Clone)]
pub(super) enum Touch {
    Always,
    Never,
    /// Each line as the watch judges it.
    Judged(LineWatch),
}

/// Which part of a stream is kept in memory.
#[derive(Debug, Clone, Copy)]
pub(super) enum Keep {
    /// The first n bytes.
    Head(usize),
    /// The last n bytes.
    Tail(usize),
}

/// The in-memory excerpt of a stream.
#[derive(Debug, Default)]
pub(super) struct Excerpt {
    pub(super) text: String,
    /// Whether bytes were dropped.
    pub(super) truncated: bool,
}

impl Excerpt {
    fn push(&mut self, piece: &str, keep: Keep) {
        match keep {
            Keep::Head(_) if self.truncated => {}
            Keep::Head(limit) => {
                let room = limit.saturating_sub(self.text.len());
                if piece.len() > room {
                    self.truncated = true;
                }
                self.text
                    .push_str(&piece[..floor_char_boundary(piece, room)]);
            }
            Keep::Tail(limit) => {
                self.text.push_str(piece);
                if self.text.len() > limit {
                    self.truncated = true;
                    let excess = self.text.len() - limit;
                    let start = ceil_char_boundary(&self.text, excess);
                    self.text.drain(..start);
                }
            }
        }
    }
}

/// A stream being drained on its own thread.
pub(super) struct Drain {
    thread: JoinHandle<()>,
    excerpt: Arc<Mutex<Excerpt>>,
    /// Disconnected once the thread has read everything (or panicked): a wait for the end of
    /// the output wakes at that moment rather than at the next poll.
    done: Receiver<()>,
    finished: bool,
}

impl Drain {
    /// Starts draining `reader` into every file of `sinks` (the combined transcript, and for
    /// stdout optionally a file of its own).
    pub(super) fn start(
        name: &str,
        mut reader: impl Read + Send + 'static,
        sinks: Vec<Arc<Transcript>>,
        redactor: Arc<Redactor>,
        (activity, touch): (Arc<Activity>, Touch),
        keep: Keep,
    ) -> io::Result<Drain> {
        let excerpt = Arc::new(Mutex::new(Excerpt::default()));
        let shared = Arc::clone(&excerpt);
        let (signal, done) = mpsc::channel::<()>();
        let thread = thread::Builder::new()
            .name(format!("drain-{name}"))
            .spawn(move || {
                // Dropped when the thread ends, however it ends: that is the signal.
                let _signal = signal;
                let mut lines = LineSplitter::default();
                let mut buffer = vec![0; READ_CHUNK];
                let record = |pieces: Vec<String>| {
                    if pieces.is_empty() {
                        return;
                    }
                    for piece in &pieces {
                        activity.saw(piece, &touch);
                    }
                    for sink in &sinks {
                        sink.write_all(&pieces);
                    }
                    let mut kept = shared.lock().unwrap_or_else(PoisonError::into_inner);
                    for piece in &pieces {
                        kept.push(piece, keep);
                    }
                };
                loop {
                    match reader.read(&mut buffer) {
                        Ok(0) => break,
                        Ok(n) => {
                            if matches!(touch, Touch::Always) {
                                activity.touch();
                            }
                            record(lines.push(&buffer[..n], &redactor));
                        }
                        Err(error) if error.kind() == io::ErrorKind::Interrupted => {}
                        Err(error) => {
                            tracing::debug!("reading child output: {error}");
                            break;
                        }
                    }
                }
                record(lines.finish(&redactor));
            })?;
        Ok(Drain {
            thread,
            excerpt,
            done,
            finished: false,
        })
    }

    /// Waits until the thread has read the whole output, at most until `deadline`; whether it
    /// has.
    pub(super) fn wait_until(&mut self, deadline: Instant) -> bool {
        while !self.finished {
            let left = deadline.saturating_duration_since(Instant::now());
            match self.done.recv_timeout(left) {
                Ok(()) => {}
                Err(RecvTimeoutError::Disconnected) => self.finished = true,
                Err(RecvTimeoutError::Timeout) => return false,
            }
        }
        true
    }

    /// The excerpt so far (complete once the thread finished).
    pub(super) fn take(self) -> Excerpt {
        if self.finished {
            let _ = self.thread.join();
        }
        let mut excerpt = self.excerpt.lock().unwrap_or_else(PoisonError::into_inner);
        std::mem::take(&mut *excerpt)
    }
}

/// Cuts a byte stream into redacted text pieces: whole lines, or slices of a very long line.
#[derive(Debug, Default)]
struct LineSplitter {
    pending: Vec<u8>,
}

impl LineSplitter {
    fn push(&mut self, chunk: &[u8], redactor: &Redactor) -> Vec<String> {
        let mut pieces = Vec::new();
        let mut rest = chunk;
        while let Some(newline) = rest.iter().position(|&b| b == b'\n') {
            self.pending.extend_from_slice(&rest[..=newline]);
            pieces.push(to_text(&self.pending, redactor));
            self.pending.clear();
            rest = &rest[newline + 1..];
        }
        self.pending.extend_from_slice(rest);
        if self.pending.len() > MAX_PENDING {
            let cut = safe_cut(&self.pending, redactor);
            if cut > 0 {
                pieces.push(to_text(&self.pending[..cut], redactor));
                self.pending.drain(..cut);
            }
        }
        pieces
    }

    fn finish(&mut self, redactor: &Redactor) -> Vec<String> {
        if self.pending.is_empty() {
            return Vec::new();
        }
        let piece = to_text(&self.pending, redactor);
        self.pending.clear();
        vec![piece]
    }
}

/// Where an unfinished line can be cut: far enough from its end that a secret still arriving
/// is not split, on a UTF-8 boundary, and never through a secret already present.
fn safe_cut(pending: &[u8], redactor: &Redactor) -> usize {
    let mut cut = pending.len().saturating_sub(redactor.longest_secret());
    while cut > 0 && cut < pending.len() && is_continuation(pending[cut]) {
        cut -= 1;
    }
    match redactor.straddles(pending, cut) {
        Some(start) => start,
        None => cut,
    }
}

fn is_continuation(byte: u8) -> bool {
    byte & 0b1100_0000 == 0b1000_0000
}

fn to_text(bytes: &[u8], redactor: &Redactor) -> String {
    redactor.apply(&String::from_utf8_lossy(bytes))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn secret(value: &str) -> Redactor {
        Redactor::from_vars([("X_TOKEN".to_string(), value.to_string())])
    }

    #[test]
    fn splits_lines_across_chunks() {
        let mut lines = LineSplitter::default();
        let none = Redactor::default();
        assert_eq!(lines.push(b"one\ntw", &none), vec!["one\n"]);
        assert_eq!(lines.push(b"o\nthree", &none), vec!["two\n"]);
        assert_eq!(lines.finish(&none), vec!["three"]);
    }

    #[test]
    fn a_secret_split_across_chunks_is_still_redacted() {
        let redactor = secret("supersecretvalue");
        let mut lines = LineSplitter::default();
        let mut out = lines.push(b"key=supersec", &redactor);
        out.extend(lines.push(b"retvalue end\n", &redactor));
        assert_eq!(out.concat(), "key=[REDACTED] end\n");
    }

    #[test]
    fn a_very_long_line_is_cut_without_splitting_a_secret() {
        let redactor = secret("supersecretvalue");
        let mut line = vec![b'a'; MAX_PENDING - 4];
        line.extend_from_slice(b"supersecretvalue tail");
        let mut lines = LineSplitter::default();
        let mut out = lines.push(&line, &redactor);
        assert!(
            !out.is_empty(),
            "a line over the bound is written in pieces"
        );
        out.extend(lines.finish(&redactor));
        let text = out.concat();
        assert!(text.ends_with("[REDACTED] tail"));
        assert!(!text.contains("supersec"));
    }

    #[test]
    fn a_long_line_is_cut_on_a_char_boundary() {
        let text = "é".repeat(MAX_PENDING / 2 + 10);
        let mut lines = LineSplitter::default();
        let mut out = lines.push(text.as_bytes(), &Redactor::default());
        out.extend(lines.finish(&Redactor::default()));
        assert_eq!(out.concat(), text);
    }

    #[test]
    fn head_excerpt_stops_at_the_limit() {
        let mut excerpt = Excerpt::default();
        excerpt.push("héllo ", Keep::Head(2));
        excerpt.push("world", Keep::Head(2));
        assert_eq!(excerpt.text, "h");
        assert!(excerpt.truncated);
    }

    #[test]
    fn tail_excerpt_keeps_the_end() {
        let mut excerpt = Excerpt::default();
        excerpt.push("first line\n", Keep::Tail(12));
        excerpt.push("second line\n", Keep::Tail(12));
        assert_eq!(excerpt.text, "second line\n");
        assert!(excerpt.truncated);
    }
}
