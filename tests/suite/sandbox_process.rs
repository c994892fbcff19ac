//! The process runner with a confinement: what the kernel lets a confined child write, that it
//! is stopped as gracefully as an unconfined one, and that a confined group left behind is
//! found by its working directory. Needs bwrap: ignored by a plain `cargo test`, run by `.ci/run` with `--ignored sandbox`.

use crate::support;

use std::fs;
use std::path::Path;
use std::thread;
use std::time::{Duration, Instant};

use autobuild::process::{run, stop_leftover_group, CancelToken, ProcessEnd, ProcessSpec};
use autobuild::sandbox::{denials, Backend, Confinement, Mounts, Network};

/// A directory outside `/tmp` (which the sandbox replaces), so that what lies beside the
/// writable directory is read-only rather than hidden.
fn outside_tmp() -> tempfile::TempDir {
    tempfile::tempdir_in(support::outside_system_tmp()).unwrap()
}

/// `sh -c script` in `dir/wt`, which is the only writable directory.
fn confined(backend: &Backend, dir: &Path, script: &str) -> ProcessSpec {
    let worktree = dir.join("wt");
    fs::create_dir_all(&worktree).unwrap();
    let mut spec = ProcessSpec::new("sh", &worktree, dir.join("logs/transcript.log"));
    spec.args = vec!["-c".to_string(), script.to_string()];
    spec.capture_limit = 1 << 20;
    spec.kill_grace = Duration::from_secs(2);
    spec.timeout = Some(Duration::from_secs(30));
    spec.sandbox = Some(
        Confinement::new(
            backend.clone(),
            Mounts {
                writable: vec![worktree.canonicalize().unwrap()],
                ..Mounts::default()
            },
        )
        .wrapper(),
    );
    spec
}

fn wait_for(path: &Path) {
    let deadline = Instant::now() + Duration::from_secs(10);
    while !path.exists() {
        assert!(
            Instant::now() < deadline,
            "{} never appeared",
            path.display()
        );
        thread::sleep(Duration::from_millis(20));
    }
}

#[test]
#[ignore = "needs bubblewrap: run with --ignored (.ci/run does where bwrap works)"]
fn only_the_writable_paths_and_a_private_tmp_can_be_written() {
    let backend = crate::support::require_sandbox();
    let dir = outside_tmp();
    let private = format!("autobuild-sandbox-test-{}", std::process::id());
    let spec = confined(
        &backend,
        dir.path(),
        &format!(
            "echo a > inside.txt; echo b > ../beside.txt; echo beside=$?; \
             echo c > /tmp/{private} && echo tmp=$(cat /tmp/{private}); echo TMPDIR=$TMPDIR"
        ),
    );
    let outcome = run(&spec, &CancelToken::new()).unwrap();
    assert_eq!(
        outcome.end,
        ProcessEnd::Exited(0),
        "{}",
        outcome.stderr_tail
    );
    assert!(dir.path().join("wt/inside.txt").is_file());
    assert!(!dir.path().join("beside.txt").exists());
    assert!(outcome.stdout.contains("beside=2"), "{}", outcome.stdout);
    match backend {
        // A private /tmp of its own.
        Backend::Bwrap { .. } => {
            assert!(outcome.stdout.contains("tmp=c\n"), "{}", outcome.stdout);
            assert!(
                outcome.stdout.contains("TMPDIR=/tmp\n"),
                "{}",
                outcome.stdout
            );
        }
        // The host's /tmp is read-only; TMPDIR is a private directory, gone after the step.
        Backend::Landlock { .. } => {
            assert!(!outcome.stdout.contains("tmp=c"), "{}", outcome.stdout);
            let tmpdir = outcome.stdout.split("TMPDIR=").nth(1).unwrap().trim();
            assert!(tmpdir.contains("autobuild-tmp-"), "{}", outcome.stdout);
        }
    }
    assert!(!Path::new("/tmp").join(&private).exists());
    let confinement = Confinement::new(
        backend.clone(),
        Mounts {
            writable: vec![spec.cwd.canonicalize().unwrap()],
            ..Mounts::default()
        },
    );
    let refused = denials::in_file(&spec.log_path, &confinement);
    let expected = match backend {
        Backend::Bwrap { .. } => 1,
        // The write to /tmp is refused too.
        Backend::Landlock { .. } => 2,
    };
    assert_eq!(refused.len(), expected, "{refused:?}");
    assert!(refused[0].contains("beside.txt"), "{refused:?}");
}

#[test]
#[ignore = "needs bubblewrap: run with --ignored (.ci/run does where bwrap works)"]
fn exit_codes_pass_through_the_sandbox() {
    let backend = crate::support::require_sandbox();
    let dir = outside_tmp();
    let outcome = run(
        &confined(&backend, dir.path(), "exit 7"),
        &CancelToken::new(),
    )
    .unwrap();
    assert_eq!(outcome.end, ProcessEnd::Exited(7));
}

#[test]
#[ignore = "needs bubblewrap: run with --ignored (.ci/run does where bwrap works)"]
fn a_cancelled_confined_program_still_gets_to_clean_up() {
    let backend = crate::support::require_sandbox();
    let dir = outside_tmp();
    let mut spec = confined(
        &backend,
        dir.path(),
        "trap 'sleep 0.3; echo saved > saved; exit 3' INT; echo > started; \
         while :; do sleep 0.05; done",
    );
    // A grace far beyond what the trap needs, so a loaded machine cannot turn the graceful stop
    // into a kill (the test ends as soon as the trap exits, not after the grace).
    spec.kill_grace = Duration::from_secs(60);
    let cancel = CancelToken::new();
    let started = dir.path().join("wt/started");
    let handle = {
        let cancel = cancel.clone();
        thread::spawn(move || run(&spec, &cancel).unwrap())
    };
    wait_for(&started);
    cancel.cancel();
    let outcome = handle.join().unwrap();
    assert_eq!(outcome.end, ProcessEnd::Cancelled);
    // Had the wrapper been sent SIGINT too, it would have died at once and taken the program
    // with it (SIGKILL) before its trap ran.
    assert!(dir.path().join("wt/saved").is_file());
}

#[test]
#[ignore = "needs bubblewrap: run with --ignored (.ci/run does where bwrap works)"]
fn a_confined_group_left_behind_is_found_by_its_worktree() {
    let backend = crate::support::require_sandbox();
    let dir = outside_tmp();
    let mut spec = confined(&backend, dir.path(), "sleep 30");
    let group_file = dir.path().join("agent.pgid");
    spec.group_file = Some(group_file.clone());
    let worktree = spec.cwd.clone();
    let handle = thread::spawn(move || run(&spec, &CancelToken::new()).unwrap());
    wait_for(&group_file);
    // bwrap needs a moment to start the program in the worktree.
    let deadline = Instant::now() + Duration::from_secs(10);
    let stopped = loop {
        let copy = dir.path().join("copy.pgid");
        fs::copy(&group_file, &copy).unwrap();
        if let Some(pgid) = stop_leftover_group(&copy, &[&worktree]) {
            break pgid;
        }
        assert!(
            Instant::now() < deadline,
            "the confined program was never found"
        );
        thread::sleep(Duration::from_millis(50));
    };
    // Emptied once the run saw its group end.
    let recorded: i32 = fs::read_to_string(&group_file)
        .ok()
        .filter(|text| !text.trim().is_empty())
        .map(|text| text.trim().parse().unwrap())
        .unwrap_or(stopped);
    assert_eq!(stopped, recorded);
    let outcome = handle.join().unwrap();
    assert_ne!(outcome.end, ProcessEnd::Exited(0));
    assert!(outcome.duration < Duration::from_secs(20));
}

#[test]
#[ignore = "needs bubblewrap: run with --ignored (.ci/run does where bwrap works)"]
fn a_confined_program_cannot_make_the_read_only_binds_writable() {
    let backend = crate::support::require_sandbox();
    let dir = outside_tmp();
    let spec = confined(
        &backend,
        dir.path(),
        "mount -o remount,bind,rw / 2>/dev/null; mount -o remount,bind,rw .. 2>/dev/null; \
         echo b > ../beside.txt; exit 0",
    );
    let outcome = run(&spec, &CancelToken::new()).unwrap();
    assert_eq!(
        outcome.end,
        ProcessEnd::Exited(0),
        "{}",
        outcome.stderr_tail
    );
    assert!(!dir.path().join("beside.txt").exists());
}

#[test]
#[ignore = "needs bubblewrap: run with --ignored (.ci/run does where bwrap works)"]
fn a_confined_agent_cli_can_start_its_own_bubblewrap_sandbox() {
    // codex runs the model's commands under bubblewrap itself, in a user namespace.
    // Under Landlock no process may mount, so there is no bwrap inside (docs/sandbox.md, "Landlock");
    // `.ci/run` skips this test in its Landlock pass.
    let bwrap = crate::support::require_bwrap();
    let backend = crate::support::require_sandbox();
    let dir = outside_tmp();
    let spec = confined(
        &backend,
        dir.path(),
        &format!(
            "{} --unshare-user --ro-bind / / --dev /dev --proc /proc --bind \"$PWD\" \"$PWD\" \
             --chdir \"$PWD\" sh -c 'echo inner > inner.txt'",
            bwrap.display()
        ),
    );
    let outcome = run(&spec, &CancelToken::new()).unwrap();
    assert_eq!(
        outcome.end,
        ProcessEnd::Exited(0),
        "{}",
        outcome.stderr_tail
    );
    assert!(dir.path().join("wt/inner.txt").is_file());
}

/// Whatever user autobuild runs as (root in CI), a confined program has no capability that
/// could undo its confinement: no `CAP_SYS_ADMIN` (mounts), `CAP_DAC_OVERRIDE`, `CAP_SYS_PTRACE`
/// or `CAP_SYS_MODULE`, in its effective or bounding set.
#[test]
#[ignore = "needs bubblewrap: run with --ignored (.ci/run does where bwrap works)"]
fn a_confined_program_has_no_capability_to_get_out() {
    let backend = crate::support::require_sandbox();
    let dir = outside_tmp();
    let spec = confined(
        &backend,
        dir.path(),
        "grep -E '^Cap(Eff|Bnd|Prm)' /proc/self/status",
    );
    let outcome = run(&spec, &CancelToken::new()).unwrap();
    assert_eq!(
        outcome.end,
        ProcessEnd::Exited(0),
        "{}",
        outcome.stderr_tail
    );
    let dangerous: u64 = [1u64, 16, 19, 21].iter().map(|bit| 1 << bit).sum();
    let sets: Vec<u64> = outcome
        .stdout
        .lines()
        .map(|line| u64::from_str_radix(line.split_whitespace().nth(1).unwrap(), 16).unwrap())
        .collect();
    assert_eq!(sets.len(), 3, "{}", outcome.stdout);
    for set in sets {
        assert_eq!(set & dangerous, 0, "{}", outcome.stdout);
    }
}

/// The pids of the processes whose command line mentions `needle`.
fn processes_running(needle: &str) -> Vec<String> {
    fs::read_dir("/proc")
        .unwrap()
        .flatten()
        .filter(|entry| entry.file_name().to_string_lossy().parse::<u32>().is_ok())
        .filter(|entry| {
            fs::read(entry.path().join("cmdline"))
                .is_ok_and(|line| String::from_utf8_lossy(&line).contains(needle))
        })
        .map(|entry| entry.file_name().to_string_lossy().into_owned())
        .collect()
}

#[test]
#[ignore = "needs bubblewrap: run with --ignored (.ci/run does where bwrap works)"]
fn nothing_a_confined_program_started_outlives_it() {
    let backend = crate::support::require_sandbox();
    let dir = outside_tmp();
    let worktree = dir.path().join("wt");
    fs::create_dir_all(&worktree).unwrap();
    // A program of a name no other test runs, so what is left of it can be found in /proc.
    let sleeper = worktree.join("left-behind-sleeper");
    fs::copy("/bin/sleep", &sleeper).unwrap();
    let sleeper = sleeper.display().to_string();
    let script = format!(
        "setsid {sleeper} 30 & sh -c '{sleeper} 30 &' ; \
         while [ \"$(ls /proc | grep -c '^[0-9]')\" -lt 4 ]; do sleep 0.01; done"
    );
    let spec = confined(&backend, dir.path(), &script);
    let outcome = run(&spec, &CancelToken::new()).unwrap();
    assert_eq!(
        outcome.end,
        ProcessEnd::Exited(0),
        "{}",
        outcome.stderr_tail
    );
    assert_eq!(processes_running(&sleeper), Vec::<String>::new());
}

/// What a confined `python3` reaches of sockets the test listens on outside: `script` prints
/// one `name=ok|refused` line per attempt.
fn reach(network: Network, script: &str) -> String {
    let backend = crate::support::require_sandbox();
    let dir = outside_tmp();
    let mut spec = confined(&backend, dir.path(), "python3 -c \"$REACH\"");
    spec.env = vec![("REACH".to_string(), script.to_string())];
    let mut confinement = Confinement::new(
        backend.clone(),
        Mounts {
            writable: vec![spec.cwd.canonicalize().unwrap()],
            // As `Sandbox::confine` sets it.
            offline: network == Network::None,
            ..Mounts::default()
        },
    );
    confinement.network = network;
    spec.sandbox = Some(confinement.wrapper());
    let outcome = run(&spec, &CancelToken::new()).unwrap();
    assert_eq!(
        outcome.end,
        ProcessEnd::Exited(0),
        "{}",
        outcome.stderr_tail
    );
    outcome.stdout
}

/// `python3` lines that try `connect` on `target` and print `name=ok` or `name=refused`.
fn attempt(name: &str, family: &str, target: &str) -> String {
    format!(
        "try:\n    s = socket.socket(socket.{family}); s.settimeout(5); s.connect({target}); print('{name}=ok')\n\
         except OSError as e:\n    print('{name}=refused', e)\n"
    )
}

/// Unix-domain sockets of the host — a socket file under `$HOME` (a docker.sock, an ssh
/// agent's) or an abstract one — are out of reach (`network = "ip"`, the default), while
/// socket pairs and TCP still work; `network = "host"` reaches them.
#[test]
#[ignore = "needs bubblewrap: run with --ignored (.ci/run does where bwrap works)"]
fn host_sockets_are_out_of_reach_unless_the_network_is_the_hosts() {
    use std::os::linux::net::SocketAddrExt;
    use std::os::unix::net::{SocketAddr, UnixListener};
    let dir = outside_tmp();
    let path = dir.path().join("docker.sock");
    let _file = UnixListener::bind(&path).unwrap();
    let name = format!("autobuild-test-{}", std::process::id());
    let _abstract =
        UnixListener::bind_addr(&SocketAddr::from_abstract_name(name.as_bytes()).unwrap()).unwrap();
    let tcp = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
    let port = tcp.local_addr().unwrap().port();
    let script = format!(
        "import socket\n{}{}{}a, b = socket.socketpair(); a.send(b'x'); print('pair=' + b.recv(1).decode())\n",
        attempt("file", "AF_UNIX", &format!("'{}'", path.display())),
        attempt("abstract", "AF_UNIX", &format!("'\\0{name}'")),
        attempt("tcp", "AF_INET", &format!("('127.0.0.1', {port})")),
    );
    let confined = reach(Network::Ip, &script);
    assert!(confined.contains("file=refused"), "{confined}");
    assert!(confined.contains("abstract=refused"), "{confined}");
    assert!(confined.contains("tcp=ok"), "{confined}");
    assert!(confined.contains("pair=x"), "{confined}");
    let host = reach(Network::Host, &script);
    assert!(host.contains("file=ok"), "{host}");
}

/// `network = "none"`: not even the host's loopback.
#[test]
#[ignore = "needs bubblewrap: run with --ignored (.ci/run does where bwrap works)"]
fn no_network_reaches_no_listener_of_the_host() {
    let tcp = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
    let port = tcp.local_addr().unwrap().port();
    let script = format!(
        "import socket\n{}",
        attempt("tcp", "AF_INET", &format!("('127.0.0.1', {port})"))
    );
    let confined = reach(Network::None, &script);
    assert!(confined.contains("tcp=refused"), "{confined}");
    assert!(reach(Network::Ip, &script).contains("tcp=ok"));
}
