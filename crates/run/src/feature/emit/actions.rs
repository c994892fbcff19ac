//! Every action an emitted workflow uses, in one table: pinned by commit (a tag can be moved,
//! a commit cannot), the release the commit is in the comment beside each `uses:`. Each is a
//! Node 24 major (`runs.using: node24`): Node 20, which the `@v4` majors ran on, is removed
//! from GitHub's runners. Looked up in each action's own repository (tag → commit, action.yml).

/// An action pinned to the commit of one release.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Pinned {
    pub name: &'static str,
    pub version: &'static str,
    pub commit: &'static str,
}

impl Pinned {
    /// The `uses:` value.
    pub fn uses(&self) -> String {
        format!("{}@{}", self.name, self.commit)
    }
}

pub const CHECKOUT: Pinned = Pinned {
    name: "actions/checkout",
    version: "v7.0.1",
    commit: "3d3c42e5aac5ba805825da76410c181273ba90b1",
};

pub const UPLOAD_ARTIFACT: Pinned = Pinned {
    name: "actions/upload-artifact",
    version: "v7.0.0",
    commit: "bbbca2ddaa5d8feaa63e36b76fdaad77386f024f",
};

pub const DOWNLOAD_ARTIFACT: Pinned = Pinned {
    name: "actions/download-artifact",
    version: "v8.0.1",
    commit: "3e5f45b2cfb9172054b4087a40e8e0b5a5461e7c",
};

pub const CACHE: Pinned = Pinned {
    name: "actions/cache",
    version: "v5.0.5",
    commit: "27d5ce7f107fe9357f9df03efb73ab90386fccae",
};

/// The table, for the comments the renderer adds and for tests.
pub const ALL: [Pinned; 4] = [CHECKOUT, UPLOAD_ARTIFACT, DOWNLOAD_ARTIFACT, CACHE];

/// `text` (a rendered workflow) with `# <version>` after every pinned `uses:` line.
pub fn annotate(text: &str) -> String {
    let mut out = String::with_capacity(text.len() + 256);
    for line in text.lines() {
        out.push_str(line);
        if let Some(pin) = ALL.iter().find(|p| line.trim_end().ends_with(&p.uses())) {
            out.push_str(" # ");
            out.push_str(pin.version);
        }
        out.push('\n');
    }
    out
}
