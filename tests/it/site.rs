//! `hcpspec site` over the repository's own published result, made into two versions of one
//! implementation: every link of every page resolves, the history shows both versions, the JSON
//! API validates against `vectors/schemas/site-api.schema.json`, and names from results never
//! make a path or markup.

use regex::Regex;
use serde_json::Value;
use std::path::{Path, PathBuf};
use std::process::Command;

const HCPSPEC: &str = env!("CARGO_BIN_EXE_hcpspec");

/// reports/published/result.json, with the reference's version set to `version`, its first
/// `drop` cases left out, and (when given) its `--name` set.
fn generated(version: &str, drop: usize, label: Option<&str>) -> Value {
    let path = Path::new(env!("CARGO_MANIFEST_DIR")).join("reports/published/result.json");
    let mut v: Value = serde_json::from_str(&std::fs::read_to_string(path).unwrap()).unwrap();
    for run in v["suites"][0]["runtimes"].as_array_mut().unwrap() {
        if run["runtime"] == "inproc:reference" {
            run["info"]["runtime"]["version"] = version.into();
            let cases = run["cases"].as_array_mut().unwrap();
            cases.drain(..drop);
            if let Some(l) = label {
                run["label"] = l.into();
            }
        }
    }
    v
}

/// Build a site from a registry listing `results` (file name, record) for one implementation,
/// `reference`, and the others of the newest result given as arguments.
fn build(results: &[(&str, Value)], name: &str, runtime: &str) -> (tempfile::TempDir, PathBuf) {
    let dir = tempfile::tempdir().unwrap();
    for (f, v) in results {
        std::fs::write(dir.path().join(f), serde_json::to_string(v).unwrap()).unwrap();
    }
    let registry = serde_json::json!({
        "title": "hcpspec compatibility",
        "implementations": [{
            "name": name,
            "runtime": runtime,
            "homepage": "https://example.org/reference",
            "results": results.iter().map(|(f, _)| *f).collect::<Vec<_>>(),
        }],
    });
    std::fs::write(dir.path().join("registry.json"), registry.to_string()).unwrap();
    let out = dir.path().join("site");
    let last = dir.path().join(results.last().unwrap().0);
    let o = Command::new(HCPSPEC)
        .arg("site")
        .arg("--registry")
        .arg(dir.path().join("registry.json"))
        .arg(&last)
        .arg("--out")
        .arg(&out)
        .env_remove("HCPSPEC_VECTORS")
        .output()
        .unwrap();
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    (dir, out)
}

fn files(dir: &Path, ext: &str, out: &mut Vec<PathBuf>) {
    for e in std::fs::read_dir(dir).unwrap() {
        let p = e.unwrap().path();
        if p.is_dir() {
            files(&p, ext, out);
        } else if p.extension().is_some_and(|x| x == ext) {
            out.push(p);
        }
    }
}

/// Every `href`/`src` of every page: an `https://` link, or a file under the site (and, with a
/// `#fragment`, an element of that id in it).
fn broken_links(site: &Path) -> Vec<String> {
    let link = Regex::new(r#"(?:href|src)=(?:"([^"]*)"|([^\s>"]+))"#).unwrap();
    let root = site.canonicalize().unwrap();
    let mut pages = vec![];
    files(site, "html", &mut pages);
    assert!(pages.len() > 3, "{pages:?}");
    let mut broken = vec![];
    for page in &pages {
        let text = std::fs::read_to_string(page).unwrap();
        for c in link.captures_iter(&text) {
            let href = c.get(1).or(c.get(2)).unwrap().as_str();
            if href.starts_with("https://") {
                continue;
            }
            let (file, frag) = href.split_once('#').unwrap_or((href, ""));
            let target = if file.is_empty() {
                page.clone()
            } else {
                page.parent().unwrap().join(file)
            };
            let ok = target
                .canonicalize()
                .is_ok_and(|t| t.starts_with(&root) && t.is_file())
                && (frag.is_empty() || {
                    let t = std::fs::read_to_string(&target).unwrap_or_default();
                    t.contains(&format!("id=\"{frag}\"")) || t.contains(&format!("id={frag}>"))
                });
            if !ok {
                broken.push(format!("{}: {href}", page.display()));
            }
        }
    }
    broken
}

#[test]
fn site_links_history_and_api() {
    let (_dir, site) = build(
        &[
            ("old.json", generated("0.1.0", 3, None)),
            ("new.json", generated("0.2.0", 0, None)),
        ],
        "reference",
        "reference",
    );
    let broken = broken_links(&site);
    assert!(broken.is_empty(), "broken links: {broken:#?}");
    // The check finds a broken link and a missing anchor when there is one.
    std::fs::write(
        site.join("x.html"),
        r#"<a href="nope.html">a</a><a href="index.html#nope">b</a>"#,
    )
    .unwrap();
    assert_eq!(broken_links(&site).len(), 2);
    std::fs::remove_file(site.join("x.html")).unwrap();
    // The overview names every implementation; the sentence pages exist.
    let index = std::fs::read_to_string(site.join("index.html")).unwrap();
    for id in ["reference", "stub", "minihcp", "minihcp-other"] {
        assert!(
            index.contains(&format!("href=\"implementations/{id}.html\"")),
            "{id}"
        );
    }
    let mut sentences = vec![];
    files(&site.join("sentences"), "html", &mut sentences);
    assert!(sentences.len() > 10, "{}", sentences.len());
    // History: both versions of reference, oldest first, the newer in the overview.
    let page = std::fs::read_to_string(site.join("implementations/reference.html")).unwrap();
    let old = page.find("data-version=\"0.1.0\"").expect("0.1.0 row");
    let new = page.find("data-version=\"0.2.0\"").expect("0.2.0 row");
    assert!(old < new);
    assert!(index.contains("<td>0.2.0</td>"));
    let api: Value = serde_json::from_str(
        &std::fs::read_to_string(site.join("api/implementations/reference.json")).unwrap(),
    )
    .unwrap();
    let runs = api["runs"].as_array().unwrap();
    assert_eq!(runs.len(), 2);
    let total = |r: &Value| r["suites"]["contract"]["total"].as_u64().unwrap();
    assert_eq!(
        total(&runs[1]) - total(&runs[0]),
        3,
        "the older run had 3 cases fewer"
    );
    // Every API file validates against the schema in vectors/schemas/.
    let mut apis = vec![];
    files(&site.join("api"), "json", &mut apis);
    assert_eq!(apis.len(), 5);
    for f in apis {
        let v: Value = serde_json::from_str(&std::fs::read_to_string(&f).unwrap()).unwrap();
        let bad = hcpspec::schema::violations(hcpspec::schema::site_api(), &v);
        assert!(bad.is_empty(), "{}: {bad:?}", f.display());
    }
    // A badge per implementation and suite, in shields.io's endpoint shape.
    let badge: Value = serde_json::from_str(
        &std::fs::read_to_string(site.join("badges/reference/contract.json")).unwrap(),
    )
    .unwrap();
    assert_eq!(badge["schemaVersion"], 1);
}

#[test]
fn names_from_results_make_no_path_and_no_markup() {
    let evil = "../../<script>x</script>\u{202e}/..";
    let (dir, site) = build(
        &[("r.json", generated("<b>9</b>", 0, Some(evil)))],
        evil,
        evil,
    );
    let mut all = vec![];
    files(dir.path(), "html", &mut all);
    files(dir.path(), "json", &mut all);
    for f in &all {
        assert!(
            f.starts_with(&site) || f.parent() == Some(dir.path()),
            "{}",
            f.display()
        );
        let name = f.file_name().unwrap().to_string_lossy();
        assert!(!name.starts_with('.') && !name.contains(".."), "{name}");
        if f.extension().is_some_and(|x| x == "html") {
            let t = std::fs::read_to_string(f).unwrap();
            assert!(
                !t.contains("<script>") && !t.contains("<b>9"),
                "{}",
                f.display()
            );
            assert!(!t.contains('\u{202e}'), "{}", f.display());
        }
    }
    assert!(broken_links(&site).is_empty());
}

#[test]
fn a_registry_url_is_refused_as_not_fetched_here() {
    let dir = tempfile::tempdir().unwrap();
    let reg = dir.path().join("registry.json");
    std::fs::write(
        &reg,
        r#"{"implementations":[{"name":"x","results":["https://example.org/result.json"]}]}"#,
    )
    .unwrap();
    let e = hcpspec::report::site::load(&reg).unwrap_err();
    assert!(e.to_string().contains("local files only"), "{e}");
}

#[test]
fn a_site_of_nothing_is_bad_input() {
    let dir = tempfile::tempdir().unwrap();
    let o = Command::new(HCPSPEC)
        .args(["site", "--out"])
        .arg(dir.path().join("site"))
        .output()
        .unwrap();
    assert_eq!(
        o.status.code(),
        Some(2),
        "{}",
        String::from_utf8_lossy(&o.stderr)
    );
    assert!(String::from_utf8_lossy(&o.stderr).contains("--registry"));
}
