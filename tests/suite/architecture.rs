//! ARCHITECTURE.md's invariants about the code's structure, held against the code: the crate
//! graph is the layer table (a crate depends only on crates below it; the compiler refuses an
//! import no dependency allows), and only the binary crate prints.

use std::collections::BTreeMap;
use std::fs;
use std::path::{Path, PathBuf};

/// The layers, bottom first (ARCHITECTURE.md, "Layers"): each crate's key in
/// `[workspace.dependencies]`, and `autobuild` for the root package (the command line and
/// the presentation). `testkit` is a dev-dependency of any crate and no layer.
const LAYERS: &[&str] = &[
    "base",
    "process",
    "sandbox",
    "git",
    "model",
    "agents",
    "run",
    "autobuild",
];

fn root() -> &'static Path {
    Path::new(env!("CARGO_MANIFEST_DIR"))
}

fn manifest(path: &Path) -> toml::Table {
    toml::from_str(&fs::read_to_string(path).unwrap()).unwrap()
}

/// The workspace's own crates a manifest's `[dependencies]` names, by their keys.
fn internal_dependencies(manifest: &toml::Table, internal: &[String]) -> Vec<String> {
    manifest
        .get("dependencies")
        .and_then(|d| d.as_table())
        .map(|deps| {
            deps.keys()
                .filter(|k| internal.contains(k))
                .cloned()
                .collect()
        })
        .unwrap_or_default()
}

#[test]
fn the_crate_graph_is_the_layer_table() {
    let workspace = manifest(&root().join("Cargo.toml"));
    let declared = workspace["workspace"]["dependencies"].as_table().unwrap();
    let internal: Vec<String> = declared
        .iter()
        .filter(|(_, v)| v.get("path").is_some())
        .map(|(k, _)| k.clone())
        .collect();
    let mut crates: BTreeMap<String, toml::Table> = BTreeMap::new();
    for key in &internal {
        let path = declared[key]["path"].as_str().unwrap();
        crates.insert(key.clone(), manifest(&root().join(path).join("Cargo.toml")));
    }
    crates.insert("autobuild".to_string(), workspace);
    // Every crate under crates/ is declared, and every declared crate but testkit is a layer.
    let on_disk = fs::read_dir(root().join("crates")).unwrap().count();
    assert_eq!(
        on_disk,
        internal.len(),
        "crates/ and [workspace.dependencies]"
    );
    for key in crates.keys().filter(|k| *k != "testkit") {
        assert!(LAYERS.contains(&key.as_str()), "{key} is in no layer");
    }
    let level = |key: &str| LAYERS.iter().position(|l| *l == key);
    let mut upward = Vec::new();
    for (key, manifest) in &crates {
        for dep in internal_dependencies(manifest, &internal) {
            let below = match (level(key), level(&dep)) {
                (Some(from), Some(to)) => to < from,
                _ => false,
            };
            if !below {
                upward.push(format!("{key} -> {dep}"));
            }
        }
    }
    assert!(
        upward.is_empty(),
        "dependencies that do not point down: {upward:#?}"
    );
}

/// Every Rust source file of the workspace's crates (the root package's `src/` and
/// `crates/*/src`).
fn sources() -> Vec<PathBuf> {
    fn walk(dir: &Path, out: &mut Vec<PathBuf>) {
        for entry in fs::read_dir(dir).unwrap() {
            let path = entry.unwrap().path();
            if path.is_dir() {
                walk(&path, out);
            } else if path.extension().is_some_and(|e| e == "rs") {
                out.push(path);
            }
        }
    }
    let mut files = Vec::new();
    walk(&root().join("src"), &mut files);
    for krate in fs::read_dir(root().join("crates")).unwrap() {
        walk(&krate.unwrap().path().join("src"), &mut files);
    }
    files
}

/// The product part of a source file: up to its first `#[cfg(test)]`, none of a test file.
fn product_text(path: &Path) -> String {
    let name = path.file_name().unwrap().to_string_lossy();
    if name == "tests.rs"
        || name.ends_with("_tests.rs")
        || path.components().any(|c| c.as_os_str() == "tests")
    {
        return String::new();
    }
    let text = fs::read_to_string(path).unwrap();
    match text.find("#[cfg(test)]") {
        Some(at) => text[..at].to_string(),
        None => text,
    }
}

#[test]
fn only_the_binary_crate_prints() {
    let printing = [
        "println!",
        "print!(",
        "eprintln!",
        "eprint!(",
        "stdout()",
        "stderr()",
    ];
    let crates = root().join("crates");
    let files: Vec<PathBuf> = sources()
        .into_iter()
        .filter(|p| p.starts_with(&crates))
        .collect();
    assert!(files.len() > 300, "the walk found the library's sources");
    let found: Vec<String> = files
        .iter()
        .flat_map(|path| {
            let text = product_text(path);
            printing
                .iter()
                .filter(|p| text.contains(**p))
                .map(|p| format!("{}: {p}", path.display()))
                .collect::<Vec<_>>()
        })
        .collect();
    assert!(found.is_empty(), "{found:#?}");
}

/// Code comments cite documents the repository carries (README.md, docs/, ARCHITECTURE.md),
/// never the design document it does not.
#[test]
fn the_source_cites_only_documents_the_repository_carries() {
    let files = sources();
    assert!(files.len() > 300, "the walk found the sources");
    let citing: Vec<String> = files
        .iter()
        .filter(|path| fs::read_to_string(path).unwrap().contains("DESIGN.md"))
        .map(|path| path.display().to_string())
        .collect();
    assert!(citing.is_empty(), "{citing:#?}");
    assert!(root().join("ARCHITECTURE.md").is_file());
}
