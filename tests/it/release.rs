//! The release's scripts (docs/releasing.md), run as the release workflow runs them, on copies of
//! the files they read; and the workflow calls no script that nothing here or in `.ci/run` runs.

use std::fs;
use std::path::{Path, PathBuf};
use std::process::{Command, Output};

fn root() -> &'static Path {
    Path::new(env!("CARGO_MANIFEST_DIR"))
}

fn script(name: &str, args: &[&str]) -> Output {
    Command::new(root().join("scripts").join(name))
        .args(args)
        .output()
        .unwrap_or_else(|e| panic!("scripts/{name}: {e}"))
}

fn text(out: &[u8]) -> String {
    String::from_utf8_lossy(out).into_owned()
}

/// A checkout's three files, as the release reads them, in a temp dir.
fn checkout(version: &str, unreleased: &str, sections: &str) -> tempfile::TempDir {
    let dir = tempfile::tempdir().unwrap();
    fs::write(
        dir.path().join("Cargo.toml"),
        format!("[package]\nname = \"hcpspec\"\nversion = \"{version}\"\n\n[dependencies]\nserde = {{ version = \"1\" }}\n"),
    )
    .unwrap();
    fs::copy(
        root().join("pyproject.toml"),
        dir.path().join("pyproject.toml"),
    )
    .unwrap();
    fs::write(
        dir.path().join("CHANGELOG.md"),
        format!("# Changelog\n\nIntro.\n\n## Unreleased\n{unreleased}\n{sections}"),
    )
    .unwrap();
    dir
}

fn version_of(tag: &str, dir: &Path) -> Output {
    script("release-version.sh", &[tag, dir.to_str().unwrap()])
}

#[test]
fn a_tag_that_agrees_with_the_crate_and_the_changelog_is_released_as_its_version() {
    let dir = checkout(
        "1.2.3",
        "",
        "## 1.2.3\n\n- A change.\n\n## 1.2.2\n\n- Older.\n",
    );
    let out = version_of("v1.2.3", dir.path());
    assert!(out.status.success(), "{}", text(&out.stderr));
    assert_eq!(text(&out.stdout), "1.2.3\n");
}

#[test]
fn every_disagreement_is_one_line_and_the_release_stops() {
    let cases: &[(&str, &str, &str, &str, &str)] = &[
        ("1.2.3", "", "## 1.2.3\n- x\n", "1.2.3", "is not vX.Y.Z"),
        (
            "1.2.3",
            "",
            "## 1.2.4\n- x\n",
            "v1.2.4",
            "Cargo.toml's version is 1.2.3",
        ),
        (
            "1.2.3",
            "",
            "## 1.2.2\n- x\n",
            "v1.2.3",
            "no '## 1.2.3' section",
        ),
        (
            "1.2.3",
            "\n- Not moved.\n",
            "## 1.2.3\n- x\n",
            "v1.2.3",
            "Unreleased section is not empty",
        ),
    ];
    for (version, unreleased, sections, tag, says) in cases {
        let dir = checkout(version, unreleased, sections);
        let out = version_of(tag, dir.path());
        let err = text(&out.stderr);
        assert_eq!(out.status.code(), Some(1), "{tag}: {err}");
        assert!(
            out.stdout.is_empty(),
            "{tag}: printed a version: {}",
            text(&out.stdout)
        );
        assert!(err.contains(says), "{tag}: {err:?} does not say {says:?}");
        assert_eq!(
            err.lines().count(),
            1,
            "{tag}: one complaint, one line: {err}"
        );
    }
}

/// docs/releasing.md's step 2 applied to the repository's CHANGELOG.md: the Unreleased lines
/// moved under the Cargo.toml version's heading. The checked-in files then release.
#[test]
fn the_repository_releases_its_own_version_after_the_documented_steps() {
    let cargo = fs::read_to_string(root().join("Cargo.toml")).unwrap();
    let version = cargo
        .lines()
        .find_map(|l| l.strip_prefix("version = \"")?.strip_suffix('"'))
        .unwrap();
    let changelog = fs::read_to_string(root().join("CHANGELOG.md")).unwrap();
    let (head, rest) = changelog
        .split_once("## Unreleased\n")
        .expect("an Unreleased section");
    let (unreleased, older) = match rest.find("\n## ") {
        Some(i) => rest.split_at(i + 1),
        None => (rest, ""),
    };
    let heading = format!("## {version}\n");
    let older = older.strip_prefix(heading.as_str()).unwrap_or(older);
    let moved = format!("{head}## Unreleased\n\n{heading}{unreleased}\n{older}");
    let dir = tempfile::tempdir().unwrap();
    for f in ["Cargo.toml", "pyproject.toml"] {
        fs::copy(root().join(f), dir.path().join(f)).unwrap();
    }
    fs::write(dir.path().join("CHANGELOG.md"), &moved).unwrap();
    let out = version_of(&format!("v{version}"), dir.path());
    assert!(out.status.success(), "{}", text(&out.stderr));
    let notes = script("release-notes.sh", &[version, dir.path().to_str().unwrap()]);
    assert!(notes.status.success(), "{}", text(&notes.stderr));
    assert!(
        text(&notes.stdout).contains(unreleased.trim()),
        "the notes hold the moved lines"
    );
}

#[test]
fn the_release_notes_are_the_versions_section_and_nothing_else() {
    let dir = checkout("2.0.0", "", "## 2.0.0\n\n- New.\n\n## 1.0.0\n\n- Old.\n");
    let out = script("release-notes.sh", &["2.0.0", dir.path().to_str().unwrap()]);
    assert!(out.status.success(), "{}", text(&out.stderr));
    assert_eq!(text(&out.stdout).trim(), "- New.");
    let none = script("release-notes.sh", &["3.0.0", dir.path().to_str().unwrap()]);
    assert_eq!(none.status.code(), Some(1));
    assert!(text(&none.stderr).contains("no text under '## 3.0.0'"));
}

#[test]
fn the_checksums_cover_every_asset_and_a_changed_asset_fails_them() {
    let dir = tempfile::tempdir().unwrap();
    fs::write(dir.path().join("hcpspec-1.0.0.tar.gz"), "sdist").unwrap();
    fs::write(
        dir.path()
            .join("hcpspec-1.0.0-py3-none-manylinux2014_x86_64.whl"),
        "wheel",
    )
    .unwrap();
    let out = script("release-checksums.sh", &[dir.path().to_str().unwrap()]);
    assert!(out.status.success(), "{}", text(&out.stderr));
    let sums = fs::read_to_string(dir.path().join("SHA256SUMS")).unwrap();
    assert_eq!(sums.lines().count(), 2, "{sums}");
    assert!(sums.contains("  hcpspec-1.0.0.tar.gz\n"), "{sums}");
    // A second run replaces the sums (never lists SHA256SUMS itself), and a user's check of a
    // changed download fails.
    assert!(
        script("release-checksums.sh", &[dir.path().to_str().unwrap()])
            .status
            .success()
    );
    fs::write(dir.path().join("hcpspec-1.0.0.tar.gz"), "tampered").unwrap();
    let check = Command::new("sha256sum")
        .args(["--quiet", "-c", "SHA256SUMS"])
        .current_dir(dir.path())
        .output()
        .unwrap();
    assert!(
        !check.status.success(),
        "a changed asset passes its checksum"
    );
    let empty = tempfile::tempdir().unwrap();
    assert_eq!(
        script("release-checksums.sh", &[empty.path().to_str().unwrap()])
            .status
            .code(),
        Some(1)
    );
}

/// Every script the release workflow calls exists and is run on every change, by `.ci/run` or by
/// a test here: a release never runs a step for the first time.
#[test]
fn every_script_the_release_workflow_calls_is_run_by_ci_or_a_test() {
    let workflow = fs::read_to_string(root().join(".github/workflows/release.yml")).unwrap();
    let ci = fs::read_to_string(root().join(".ci/run")).unwrap();
    let tests: String = fs::read_dir(root().join("tests/it"))
        .unwrap()
        .map(|e| fs::read_to_string(e.unwrap().path()).unwrap_or_default())
        .collect();
    let called: std::collections::BTreeSet<&str> = workflow
        .match_indices("scripts/")
        .map(|(i, _)| {
            let tail = &workflow[i..];
            &tail[..tail
                .find(|c: char| !(c.is_ascii_alphanumeric() || "/-_.".contains(c)))
                .unwrap_or(tail.len())]
        })
        .filter(|s| s.ends_with(".sh") || s.ends_with(".py"))
        .collect();
    assert!(called.len() >= 6, "the workflow calls {called:?}");
    for path in called {
        assert!(
            PathBuf::from(root()).join(path).is_file(),
            "{path} does not exist"
        );
        let name = path.trim_start_matches("scripts/");
        assert!(
            ci.contains(path) || tests.contains(&format!("\"{name}\"")),
            "{path}: the release workflow calls it, but neither .ci/run nor a test runs it"
        );
    }
}

/// The container image cannot be built here (no Docker engine): check-wheel.sh runs its static
/// binary in a root made as the Dockerfile makes the image. The two say the same: the image is
/// `scratch` and the binary at `/hcpspec`, with `/tmp` and `/work`, run as the same user.
#[test]
fn the_image_root_check_wheel_runs_in_is_the_dockerfiles() {
    let dockerfile = fs::read_to_string(root().join("Dockerfile")).unwrap();
    let check = fs::read_to_string(root().join("scripts/check-wheel.sh")).unwrap();
    for said in [
        "FROM scratch",
        "USER 65532:65532",
        "ENTRYPOINT [\"/hcpspec\"]",
        "chmod 1777 /image/tmp",
        "/image/work",
    ] {
        assert!(
            dockerfile.contains(said),
            "the Dockerfile no longer says {said:?}"
        );
    }
    for said in [
        "--userspec=65532:65532",
        "chmod 1777 \"$root/tmp\"",
        "chown 65532:65532 \"$root/work\"",
        "cp \"$hc\" \"$root/hcpspec\"",
        "/hcpspec run --out /work/out",
    ] {
        assert!(
            check.contains(said),
            "check-wheel.sh's image root no longer does {said:?}"
        );
    }
}
