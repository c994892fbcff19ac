//! `autobuild bench` (docs/bench.md) on the shipped suite (bench-suites/inflection: eight tasks
//! on inflection 0.5.1, scripted agents): the exact figures of each workflow, the oracle unseen
//! by any run, and a bench that goes on where it stopped.

use std::fs;
use std::path::Path;
use std::process::Command;

use crate::support::assert_exit;

fn bench(out: &Path, extra: &[&str]) -> std::process::Output {
    Command::new(env!("CARGO_BIN_EXE_autobuild"))
        .arg("bench")
        .arg(concat!(
            env!("CARGO_MANIFEST_DIR"),
            "/bench-suites/inflection"
        ))
        .arg("--out")
        .arg(out)
        .args(["--jobs", "2", "--json"])
        .args(extra)
        .env("AUTOBUILD_CONFIG_DIR", out.join("no-config"))
        .env_remove("GITHUB_ACTIONS")
        .output()
        .unwrap()
}

#[test]
fn the_loop_resolves_what_a_single_agent_approves_wrongly() {
    let dir = tempfile::tempdir().unwrap();
    let out = dir.path().join("out");

    let output = bench(&out, &[]);

    assert_exit(&output, 0);
    let document: serde_json::Value = serde_json::from_slice(&output.stdout).unwrap();
    let figures = |i: usize| {
        let w = &document["workflows"][i];
        (
            w["workflow"].as_str().unwrap().to_string(),
            w["tasks"].as_u64().unwrap(),
            w["approved"].as_u64().unwrap(),
            w["resolved"].as_u64().unwrap(),
            w["false_approvals"].as_u64().unwrap(),
            w["median_turns"].as_f64().unwrap(),
        )
    };
    assert_eq!(figures(0), ("player-coach".into(), 8, 8, 8, 0, 1.0));
    assert_eq!(figures(1), ("solo".into(), 8, 8, 5, 3, 1.0));
    let results = document["results"].as_array().unwrap();
    let wrong: Vec<&str> = results
        .iter()
        .filter(|r| r["resolved"] == false)
        .map(|r| r["task"].as_str().unwrap())
        .collect();
    assert_eq!(wrong, ["count-noun", "human-list", "identifier"]);
    // The loop needed a second turn for exactly those.
    let two_turns: Vec<&str> = results
        .iter()
        .filter(|r| r["workflow"] == "player-coach" && r["turns"] == 2)
        .map(|r| r["task"].as_str().unwrap())
        .collect();
    assert_eq!(two_turns, ["count-noun", "human-list", "identifier"]);
    // No run ever saw the oracle.
    let run_repo = out.join("player-coach/identifier.work/repo");
    assert!(!run_repo.join("oracle_check.py").exists());
    assert!(out
        .join("player-coach/identifier.work/approved/oracle_check.py")
        .exists());

    // Killed half-way: a result that is missing is run again, the others are kept.
    let kept = out.join("solo/kebab.work/run.log");
    let before = fs::metadata(&kept).unwrap().modified().unwrap();
    fs::remove_file(out.join("solo/acronym.json")).unwrap();
    let again = bench(&out, &["--workflow", "solo"]);

    assert_exit(&again, 0);
    let document: serde_json::Value = serde_json::from_slice(&again.stdout).unwrap();
    assert_eq!(document["workflows"][0]["resolved"], 5);
    assert!(out.join("solo/acronym.json").is_file());
    assert_eq!(fs::metadata(&kept).unwrap().modified().unwrap(), before);
}

#[test]
fn a_directory_without_tasks_is_refused_with_the_layout() {
    let dir = tempfile::tempdir().unwrap();
    let output = Command::new(env!("CARGO_BIN_EXE_autobuild"))
        .args(["bench"])
        .arg(dir.path())
        .output()
        .unwrap();
    assert_exit(&output, 2);
    assert!(String::from_utf8_lossy(&output.stderr).contains(".oracle"));
}
