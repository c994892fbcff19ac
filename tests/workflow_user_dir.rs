//! The user configuration directory sits between the built-ins and the repository. (Its own
//! test binary: it points `AUTOBUILD_CONFIG_DIR` at a temporary directory for the process.)

use std::fs;

use autobuild::workflow::catalog::CONFIG_DIR_ENV;
use autobuild::workflow::context::PromptContext;
use autobuild::workflow::{resolve, Overrides};
use tempfile::TempDir;

fn write(dir: &TempDir, path: &str, text: &str) {
    let path = dir.path().join(path);
    fs::create_dir_all(path.parent().unwrap()).unwrap();
    fs::write(path, text).unwrap();
}

#[test]
fn user_layer_patches_builtins_and_the_repo_patches_both() {
    let user = TempDir::new().unwrap();
    std::env::set_var(CONFIG_DIR_ENV, user.path());
    write(
        &user,
        "workflows/player-coach.toml",
        "name = \"player-coach\"\nextends = \"player-coach\"\n[roles.player]\nmodel = \"user-player\"\n[roles.coach]\nmodel = \"user-coach\"\n",
    );
    write(&user, "prompts/player.md", "user player {{ turn }}\n");
    write(&user, "prompts/coach.md", "user coach\n");

    let repo = TempDir::new().unwrap();
    write(
        &repo,
        ".autobuild/workflows/pc.toml",
        "name = \"player-coach\"\nextends = \"player-coach\"\n[roles.coach]\nmodel = \"repo-coach\"\n",
    );
    write(&repo, ".autobuild/prompts/coach.md", "repo coach\n");

    let resolved = resolve(Some(repo.path()), "player-coach", &Overrides::default()).unwrap();
    let roles = &resolved.workflow.roles;
    assert_eq!(roles["player"].model.as_deref(), Some("user-player"));
    assert_eq!(roles["coach"].model.as_deref(), Some("repo-coach"));
    let context = PromptContext::example();
    assert_eq!(
        resolved.render_prompt("player.md", &context).unwrap(),
        "user player 2\n"
    );
    assert_eq!(
        resolved.render_prompt("coach.md", &context).unwrap(),
        "repo coach\n"
    );

    let user_only = resolve(None, "player-coach", &Overrides::default()).unwrap();
    assert_eq!(
        user_only.workflow.roles["coach"].model.as_deref(),
        Some("user-coach")
    );
}
