//! Installing packs: every directory read, linted and kept, and the ways the mutants of the
//! load and lint rows install them instead.

use super::*;

/// Install every pack directory; collect the issues of all of them before rejecting.
pub fn install_all(
    dirs: &[std::path::PathBuf],
    install: impl Fn(PackFiles) -> Result<Pack, Vec<Issue>>,
) -> Result<BTreeMap<String, Pack>, Vec<Issue>> {
    let mut packs = BTreeMap::new();
    let mut issues = Vec::new();
    for dir in dirs {
        match install(PackFiles::read(dir)) {
            Ok(p) => {
                if packs.contains_key(p.pack_id()) {
                    let file = format!("{}/surface.json", dir.display());
                    issues.push(Issue::new(
                        &file,
                        "/pack_id",
                        "pack-id-unique",
                        format!("pack_id `{}` is installed twice", p.pack_id()),
                    ));
                } else {
                    packs.insert(p.pack_id().to_string(), p);
                }
            }
            Err(mut e) => issues.append(&mut e),
        }
    }
    if issues.is_empty() {
        Ok(packs)
    } else {
        Err(issues)
    }
}

/// Whether surface.json's wrap has a `commands` member, empty or not.
pub(super) fn names_wrap_commands(files: &PackFiles) -> bool {
    files
        .surface
        .as_deref()
        .and_then(|b| serde_json::from_slice::<Value>(b).ok())
        .is_some_and(|s| s["wrap"]["commands"].is_object())
}

/// The over-strict lint mutants: each rejects a pack the spec's row 2 accepts.
pub(super) fn overstrict_lint(m: Option<Mutant>, files: &PackFiles) -> Option<Issue> {
    let json = |b: &Option<Vec<u8>>| -> Value {
        b.as_deref()
            .and_then(|b| serde_json::from_slice(b).ok())
            .unwrap_or_default()
    };
    let issue = |rule: &str| Some(Issue::new("surface.json", "", rule, "over-strict"));
    match m? {
        Mutant::SkillFormatEnforced => {
            let skill = String::from_utf8_lossy(files.skill.as_deref().unwrap_or_default());
            (!skill.trim_start().starts_with('#'))
                .then(|| Issue::new("HARNESS.md", "", "skill-present", "not Markdown"))
        }
        Mutant::PassThroughRejected if json(&files.surface)["wrap"]["pass_through"] == true => {
            issue("wrap-named-or-pass-through")
        }
        Mutant::ExtraTriggerRowRejected => {
            let surface = json(&files.surface);
            let declared: Vec<&Value> = surface["sense"]["triggers"]
                .as_array()
                .map(|a| a.iter().collect())
                .unwrap_or_default();
            let policy = json(&files.policy);
            let extra = policy["triggers"].as_object().is_some_and(|t| {
                t.keys()
                    .any(|k| !declared.contains(&&Value::String(k.clone())))
            });
            extra.then(|| {
                Issue::new(
                    "policy.json",
                    "/triggers",
                    "policy-covers-trigger",
                    "extra row",
                )
            })
        }
        _ => None,
    }
}

/// The schema-skipped mutant: whatever serde can read (unknown fields ignored) is a pack.
pub(super) fn unchecked_install(files: &PackFiles) -> Result<Pack, Vec<Issue>> {
    fn read<T: serde::de::DeserializeOwned>(bytes: &Option<Vec<u8>>) -> Option<T> {
        bytes
            .as_deref()
            .and_then(|b| serde_json::from_slice(b).ok())
    }
    let (Some(surface), Some(policy)) = (read(&files.surface), read(&files.policy)) else {
        return pack::install(files);
    };
    let skill = files
        .skill
        .as_deref()
        .map(|b| String::from_utf8_lossy(b).into_owned());
    let p = Pack {
        surface,
        policy,
        skill,
    };
    let issues = pack::lint(&p);
    if issues.is_empty() {
        Ok(p)
    } else {
        Err(issues)
    }
}

/// The policy-invented mutant: a missing policy.json becomes a read row per command (a
/// runtime adding its own Policy rows).
pub(super) fn invent_policy(mut files: PackFiles) -> PackFiles {
    if files.policy.is_none() {
        let surface: Value = files
            .surface
            .as_deref()
            .and_then(|b| serde_json::from_slice(b).ok())
            .unwrap_or_default();
        let verbs: Map<String, Value> = surface["commands"]
            .as_array()
            .into_iter()
            .flatten()
            .filter_map(|c| c["verb_key"].as_str())
            .map(|v| {
                (
                    v.to_string(),
                    serde_json::json!({ "operation": "read", "privacy": { "land": "local" } }),
                )
            })
            .collect();
        files.policy = serde_json::to_vec(&serde_json::json!({ "verbs": verbs })).ok();
    }
    files
}

/// The lint mutants: `pack::lint` without the issues of some rules.
pub(super) fn lint_without(p: &Pack, rules: &[&str]) -> Vec<Issue> {
    pack::lint(p)
        .into_iter()
        .filter(|i| !rules.contains(&i.rule.as_str()))
        .collect()
}

/// The hcp-version-unchecked mutant: whatever `hcp` a surface.json says, it is read as 1.0.
pub(super) fn any_hcp_version(mut files: PackFiles) -> PackFiles {
    if let Some(bytes) = &mut files.surface {
        if let Ok(Value::Object(mut o)) = serde_json::from_slice::<Value>(bytes) {
            if o.get("hcp").is_some_and(Value::is_string) {
                o.insert("hcp".into(), Value::String("1.0".into()));
                *bytes = serde_json::to_vec(&o).unwrap_or_default();
            }
        }
    }
    files
}

/// The parse-error-tolerated mutant: keep only the first JSON value of each file.
pub(super) fn first_values(mut files: PackFiles) -> PackFiles {
    for bytes in [&mut files.surface, &mut files.policy]
        .into_iter()
        .flatten()
    {
        let mut values = serde_json::Deserializer::from_slice(bytes).into_iter::<Value>();
        if let Some(Ok(v)) = values.next() {
            *bytes = serde_json::to_vec(&v).unwrap_or_default();
        }
    }
    files
}

/// Install one pack directory as this reference (or its mutant) does: the load and lint rows'
/// mutants each skip or bend their own rule here.
pub(super) fn install_one(
    m: Option<Mutant>,
    vs: &Knobs,
    files: PackFiles,
) -> Result<Pack, Vec<Issue>> {
    let files = if m == Some(Mutant::PolicyInvented) {
        invent_policy(files)
    } else {
        files
    };
    if let Some(why) = overstrict_lint(m, &files).or_else(|| review::overstrict(m, &files)) {
        return Err(vec![why]);
    }
    if let Some(why) = rules::skill_parse_issue(m, &files) {
        return Err(vec![why]);
    }
    let files = rules::loosen(m, files);
    if m == Some(Mutant::WhitespaceJsonRefused) {
        let padded = |b: &Option<Vec<u8>>| {
            b.as_deref()
                .is_some_and(|b| b.first().is_some_and(u8::is_ascii_whitespace))
        };
        if padded(&files.surface) || padded(&files.policy) {
            return Err(vec![Issue::new(
                "surface.json",
                "",
                "parse",
                "whitespace before JSON",
            )]);
        }
    }
    let files = if m == Some(Mutant::ParseErrorTolerated) {
        first_values(files)
    } else {
        files
    };
    let files = review::reread(m, files);
    let files = if m == Some(Mutant::HcpVersionUnchecked) {
        any_hcp_version(files)
    } else {
        files
    };
    match m {
        Some(Mutant::LintSkipped) => pack::load_files(&files),
        Some(Mutant::PolicyCoverageUnlinted) => pack::install_with(&files, |p| {
            lint_without(p, &["policy-covers-command", "policy-covers-trigger"])
        }),
        Some(Mutant::SkillUnlinted) => {
            pack::install_with(&files, |p| lint_without(p, &["skill-present"]))
        }
        Some(Mutant::WrapUnlinted) => pack::install_with(&files, |p| {
            lint_without(p, &["wrap-named-or-pass-through", "wrap-covers-command"])
        }),
        // The member's presence taken for named commands.
        Some(Mutant::WrapEmptyCommandsAccepted) if names_wrap_commands(&files) => {
            pack::install_with(&files, |p| lint_without(p, &["wrap-named-or-pass-through"]))
        }
        Some(Mutant::SchemaSkipped) => unchecked_install(&files),
        Some(r) if review::lints_its_own_way(r, &files) => review::install(r, &files),
        _ if chooses(vs, Variant::SpecLintRules) => pack::install_with(&files, variant::spec_lint),
        _ => pack::install(&files),
    }
}
