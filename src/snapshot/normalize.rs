//! The redactions that make observations comparable across runs, machines and transports. One
//! place, and steps are only ever appended (cf. trybuild's normaliser), so that old snapshots
//! stay valid. Volatile values become the case file's own variables where there is one.

use crate::error::BadInput;
use regex::Regex;
use serde_json::Value;
use std::borrow::Cow;
use std::sync::OnceLock;

/// The longest text from a runtime or shim that reports keep, in bytes; past it the text is cut
/// and marked `…[cut: N bytes in all]`.
pub const MAX_TEXT: usize = 4 << 10;

/// The largest observation reports keep, pretty-printed, in bytes; past it the observation is
/// replaced by a cut excerpt of itself.
pub const MAX_VALUE: usize = 16 << 10;

/// `s` cut to at most [`MAX_TEXT`] bytes (on a character boundary), the cut marked with the full
/// size.
pub fn cap(s: &str) -> Cow<'_, str> {
    cap_at(s, MAX_TEXT)
}

fn cap_at(s: &str, max: usize) -> Cow<'_, str> {
    if s.len() <= max || is_capped(s, max) {
        return Cow::Borrowed(s);
    }
    let mut end = max;
    while !s.is_char_boundary(end) {
        end -= 1;
    }
    Cow::Owned(format!("{}…[cut: {} bytes in all]", &s[..end], s.len()))
}

/// Already cut by [`cap_at`]: at most `max` bytes, then the cut's marker. Containing twice is
/// containing once.
fn is_capped(s: &str, max: usize) -> bool {
    s.rfind("…[cut: ").is_some_and(|at| {
        at <= max
            && s[at..]
                .strip_prefix("…[cut: ")
                .and_then(|m| m.strip_suffix(" bytes in all]"))
                .is_some_and(|n| !n.is_empty() && n.bytes().all(|b| b.is_ascii_digit()))
    })
}

/// At most the first `max` bytes of `s` (on a character boundary), after redaction: the cut
/// can never leave the head of a secret behind, and no secret survives by straddling it.
pub fn excerpt_text(s: &str, max: usize) -> String {
    excerpt_of(s, max, secrets())
}

/// [`excerpt_text`] with the given values of the environment.
fn excerpt_of(s: &str, max: usize, secrets: &[(String, String)]) -> String {
    let redacted = redact_secrets(s, secrets);
    let mut end = max.min(redacted.len());
    while !redacted.is_char_boundary(end) {
        end -= 1;
    }
    redacted[..end].to_string()
}

/// How far past its cut a line of a runtime's stderr is held, so that a secret straddling the cut
/// is redacted whole before the cut is made ([`line_cut`]).
pub const CUT_LOOKAHEAD: usize = 4 << 10;

/// A line of which `held` are the first bytes (at most `width` + [`CUT_LOOKAHEAD`]): redacted,
/// then cut to `width` bytes, so that no secret straddling the cut leaves its head behind. A
/// value of the environment longer than the lookahead, whose head the held bytes end with, is
/// cut off there too (a shape of a credential is matched within the lookahead).
pub fn line_cut(held: &[u8], width: usize) -> String {
    line_cut_of(held, width, secrets())
}

fn line_cut_of(held: &[u8], width: usize, secrets: &[(String, String)]) -> String {
    let mut cut = excerpt_of(&String::from_utf8_lossy(held), width, secrets);
    if held.len() > width {
        let head = secrets
            .iter()
            .map(|(_, v)| v.as_bytes())
            .filter(|v| v.len() > CUT_LOOKAHEAD)
            // A head no longer than the cut line itself: a value of megabytes costs no more.
            .filter_map(|v| {
                (1..v.len().min(cut.len() + 1))
                    .rev()
                    .find(|k| cut.as_bytes().ends_with(&v[..*k]))
            })
            .max();
        if let Some(k) = head {
            let mut end = cut.len() - k;
            while !cut.is_char_boundary(end) {
                end -= 1;
            }
            cut.truncate(end);
        }
    }
    cut
}

/// Environment variables whose values are never secrets, and common enough in observations
/// that redacting them would hide what a runtime did.
const BORING: &[&str] = &[
    "PATH",
    "HOME",
    "PWD",
    "OLDPWD",
    "SHELL",
    "USER",
    "LOGNAME",
    "LANG",
    "LANGUAGE",
    "TERM",
    "TERM_PROGRAM",
    "COLORTERM",
    "TMPDIR",
    "TMP",
    "TEMP",
    "HOSTNAME",
    "SHLVL",
    "EDITOR",
    "PAGER",
    "MAIL",
    "DISPLAY",
    "TZ",
    "CARGO",
    "CARGO_PRIMARY_PACKAGE",
    "CARGO_TARGET_TMPDIR",
    "RUST_BACKTRACE",
    "RUST_LOG",
    // hcpspec's own: the names said not to be secret.
    "HCPSPEC_NOT_SECRET",
    // CI systems' own data: commits, refs, run ids, workspaces. GitHub Actions' default
    // variables (docs.github.com, "Variables reference"), but none that names a credential.
    "CI",
    "GITHUB_ACTION",
    "GITHUB_ACTION_PATH",
    "GITHUB_ACTION_REF",
    "GITHUB_ACTION_REPOSITORY",
    "GITHUB_ACTIONS",
    "GITHUB_ACTOR",
    "GITHUB_ACTOR_ID",
    "GITHUB_API_URL",
    "GITHUB_BASE_REF",
    "GITHUB_ENV",
    "GITHUB_EVENT_NAME",
    "GITHUB_EVENT_PATH",
    "GITHUB_GRAPHQL_URL",
    "GITHUB_HEAD_REF",
    "GITHUB_JOB",
    "GITHUB_OUTPUT",
    "GITHUB_PATH",
    "GITHUB_REF",
    "GITHUB_REF_NAME",
    "GITHUB_REF_PROTECTED",
    "GITHUB_REF_TYPE",
    "GITHUB_REPOSITORY",
    "GITHUB_REPOSITORY_ID",
    "GITHUB_REPOSITORY_OWNER",
    "GITHUB_REPOSITORY_OWNER_ID",
    "GITHUB_RETENTION_DAYS",
    "GITHUB_RUN_ATTEMPT",
    "GITHUB_RUN_ID",
    "GITHUB_RUN_NUMBER",
    "GITHUB_SERVER_URL",
    "GITHUB_SHA",
    "GITHUB_STATE",
    "GITHUB_STEP_SUMMARY",
    "GITHUB_TRIGGERING_ACTOR",
    "GITHUB_WORKFLOW",
    "GITHUB_WORKFLOW_REF",
    "GITHUB_WORKFLOW_SHA",
    "GITHUB_WORKSPACE",
    "RUNNER_ARCH",
    "RUNNER_DEBUG",
    "RUNNER_ENVIRONMENT",
    "RUNNER_NAME",
    "RUNNER_OS",
    "RUNNER_TEMP",
    "RUNNER_TOOL_CACHE",
    "ImageOS",
    "ImageVersion",
    // GitLab CI's (its predefined variables), never CI_JOB_TOKEN or a *_PASSWORD.
    "GITLAB_CI",
    "CI_COMMIT_SHA",
    "CI_COMMIT_SHORT_SHA",
    "CI_COMMIT_BEFORE_SHA",
    "CI_COMMIT_REF_NAME",
    "CI_COMMIT_REF_SLUG",
    "CI_COMMIT_BRANCH",
    "CI_COMMIT_TAG",
    "CI_DEFAULT_BRANCH",
    "CI_JOB_ID",
    "CI_JOB_NAME",
    "CI_JOB_URL",
    "CI_PIPELINE_ID",
    "CI_PIPELINE_IID",
    "CI_PIPELINE_URL",
    "CI_PROJECT_DIR",
    "CI_PROJECT_ID",
    "CI_PROJECT_NAME",
    "CI_PROJECT_PATH",
    "CI_PROJECT_URL",
    "CI_SERVER_URL",
    // CircleCI's, Buildkite's, Travis CI's commit, branch and build.
    "CIRCLE_SHA1",
    "CIRCLE_BRANCH",
    "CIRCLE_BUILD_NUM",
    "CIRCLE_WORKFLOW_ID",
    "BUILDKITE_COMMIT",
    "BUILDKITE_BRANCH",
    "BUILDKITE_BUILD_ID",
    "BUILDKITE_BUILD_NUMBER",
    "TRAVIS_COMMIT",
    "TRAVIS_BRANCH",
    "TRAVIS_BUILD_ID",
    "TRAVIS_BUILD_NUMBER",
];

/// The parts of a variable's name that say it holds a credential: such a variable is a
/// secret whatever a list says (`GITHUB_TOKEN`, `ACTIONS_RUNTIME_TOKEN`, `CI_JOB_TOKEN`,
/// `DB_PASSWORD`, `AWS_SECRET_ACCESS_KEY` …). A part holding one of the first, or equal to one
/// of the second.
const CREDENTIAL_PARTS: &[&str] = &[
    "TOKEN",
    "SECRET",
    "PASSW",
    "CREDENTIAL",
    "PRIVATE",
    "APIKEY",
];
const CREDENTIAL_WORDS: &[&str] = &[
    "KEY",
    "KEYS",
    "PAT",
    "AUTH",
    "COOKIE",
    "SESSION",
    "PASS",
    "PWD",
    "CERT",
    "SIGNATURE",
];

/// Is `name` named like a credential's ([`CREDENTIAL_PARTS`], [`CREDENTIAL_WORDS`], by its
/// `_`-separated parts, in any case)?
pub fn credential_name(name: &str) -> bool {
    name.to_ascii_uppercase()
        .split(['_', '-', '.'])
        .any(|part| {
            CREDENTIAL_PARTS.iter().any(|p| part.contains(p)) || CREDENTIAL_WORDS.contains(&part)
        })
}

/// The variables a user said are no secrets (`--not-secret`, `HCPSPEC_NOT_SECRET`): set once,
/// before the first redaction.
static NOT_SECRET: OnceLock<Vec<String>> = OnceLock::new();

/// Say which of the environment's variables are no secrets, beside [`BORING`]'s: their values
/// are shown as they are (a secret-shaped value is still redacted). A name like a credential's
/// ([`credential_name`]) is refused. Call once, before anything is redacted.
pub fn not_secret(names: &[String]) -> Result<(), BadInput> {
    if let Some(n) = names.iter().find(|n| credential_name(n)) {
        return Err(BadInput(format!(
            "--not-secret {}: a name like a credential's stays secret (its value is redacted wherever it appears)",
            n.escape_default()
        )));
    }
    let _ = NOT_SECRET.set(names.to_vec());
    Ok(())
}

/// Is `name`'s value shown as it is: a boring variable (none named like a credential's, a
/// test says), or one the user said is no secret and not named like a credential's?
fn shown(name: &str, said: &[String]) -> bool {
    BORING.contains(&name)
        || BORING_PREFIXES.iter().any(|p| name.starts_with(p))
        || (said.iter().any(|n| n == name) && !credential_name(name))
}

/// Prefixes of variables cargo sets for a test or build (package metadata, not credentials).
const BORING_PREFIXES: &[&str] = &[
    "LC_",
    "CARGO_PKG_",
    "CARGO_CRATE_",
    "CARGO_MANIFEST_",
    "CARGO_BIN_",
    "XDG_",
];

/// The values of hcpspec's own environment that are redacted wherever they appear: at least 8
/// bytes, not a boring variable and not an existing path; longest first.
pub fn secrets() -> &'static [(String, String)] {
    static S: OnceLock<Vec<(String, String)>> = OnceLock::new();
    S.get_or_init(|| {
        secrets_of(std::env::vars_os().map(|(k, v)| {
            (
                k.to_string_lossy().into_owned(),
                v.to_string_lossy().into_owned(),
            )
        }))
    })
}

/// [`secrets`] of a given environment.
pub fn secrets_of(vars: impl IntoIterator<Item = (String, String)>) -> Vec<(String, String)> {
    let said = NOT_SECRET.get().map_or(&[][..], Vec::as_slice);
    let mut out: Vec<(String, String)> = vars
        .into_iter()
        .filter(|(k, v)| {
            v.len() >= 8
                && !shown(k, said)
                && (!v.starts_with('/') || !std::path::Path::new(v).exists())
        })
        .collect();
    out.sort_by(|a, b| b.1.len().cmp(&a.1.len()).then(a.0.cmp(&b.0)));
    out
}

/// Credentials by their shape, whoever's they are: GitHub, AWS, Slack, OpenAI-style keys, JSON
/// Web Tokens, PEM private keys, and spec 004's: the token after `Bearer` (the harness, run and
/// host tokens of an upgrade or a gate call), the password of a URL (the egress token in a proxy
/// URL) and hcpspec's own harness and run tokens (`nylorun-ht-…`, `nylorun-rt-…`). Group `keep`
/// is what stays before the placeholder, group `tail` what stays after it.
fn secret_shapes() -> &'static Regex {
    static RE: OnceLock<Regex> = OnceLock::new();
    RE.get_or_init(|| {
        Regex::new(concat!(
            r"\b(?:gh[pousr]_[A-Za-z0-9]{30,}|github_pat_[A-Za-z0-9_]{30,}",
            r"|AKIA[0-9A-Z]{16}|xox[abprs]-[A-Za-z0-9-]{10,}|sk-[A-Za-z0-9_-]{32,}",
            r"|eyJ[A-Za-z0-9_-]{8,}\.eyJ[A-Za-z0-9_-]{8,}\.[A-Za-z0-9_-]{8,}",
            r"|nylorun-[hr]t-[A-Za-z0-9_-]{6,})\b",
            r"|(?P<keep>\b[Bb]earer[ \t]+)[A-Za-z0-9._~+/-]{8,}=*",
            r"|(?P<keepurl>[A-Za-z][A-Za-z0-9+.-]*://[^/\s:@\x22']+:)[^/\s@\x22']{4,}(?P<tail>@)",
            r"|-----BEGIN [A-Z ]*PRIVATE KEY-----[\s\S]*?(?:-----END [A-Z ]*PRIVATE KEY-----|$)"
        ))
        .expect("static regex")
    })
}

/// `s` with every value of hcpspec's environment replaced by `[redacted: $NAME]` and every
/// secret-shaped token by `[redacted: secret-shaped]`.
pub fn redact_secrets<'a>(s: &'a str, secrets: &[(String, String)]) -> Cow<'a, str> {
    // memchr's search: a text can be megabytes, and it is searched once per value.
    let holds =
        |text: &str, what: &str| memchr::memmem::find(text.as_bytes(), what.as_bytes()).is_some();
    let mut out = Cow::Borrowed(s);
    for (name, value) in secrets {
        // A text shorter than the value holds neither it nor its escaped form (most texts are
        // short: a result of the caps has millions of numbers, each a text here).
        if out.len() < value.len() {
            continue;
        }
        if holds(&out, value) {
            out = Cow::Owned(out.replace(value.as_str(), &format!("[redacted: ${name}]")));
        }
        // The value as it is written inside a JSON string (a text quoting JSON), when that
        // differs: `"` and `\` escaped.
        if value.bytes().any(|b| b == b'"' || b == b'\\' || b < 0x20) {
            let quoted = serde_json::to_string(value).unwrap_or_default();
            let escaped = &quoted[1..quoted.len().saturating_sub(1).max(1)];
            if !escaped.is_empty() && holds(&out, escaped) {
                out = Cow::Owned(out.replace(escaped, &format!("[redacted: ${name}]")));
            }
        }
    }
    if secret_shapes().is_match(&out) {
        out = Cow::Owned(
            secret_shapes()
                .replace_all(&out, |c: &regex::Captures| {
                    let part = |g: &str| c.name(g).map_or("", |m| m.as_str());
                    format!(
                        "{}{}[redacted: secret-shaped]{}",
                        part("keep"),
                        part("keepurl"),
                        part("tail")
                    )
                })
                .into_owned(),
        );
    }
    out
}

/// A number whose decimal text holds a value of hcpspec's environment, as the string
/// [`redact_secrets`] makes of that text; None for any other number.
pub fn redact_number(n: &serde_json::Number, secrets: &[(String, String)]) -> Option<String> {
    let text = n.to_string();
    match redact_secrets(&text, secrets) {
        Cow::Borrowed(_) => None,
        Cow::Owned(r) => Some(r),
    }
}

/// Any text from a runtime or shim as reports keep it: secrets redacted, then capped.
pub fn contain_text(s: &str) -> String {
    let redacted = redact_secrets(s, secrets());
    cap(&redacted).into_owned()
}

/// A long text hcpspec made from contained values (a snapshot diff) as reports keep it:
/// secrets redacted, then cut at [`MAX_VALUE`].
pub fn contain_long(s: &str) -> String {
    let redacted = redact_secrets(s, secrets());
    cap_at(&redacted, MAX_VALUE).into_owned()
}

/// A whole value as reports keep it: every string and key contained, and the value cut to an
/// excerpt when it is still over [`MAX_VALUE`] pretty-printed.
pub fn contain(v: &Value) -> Value {
    // One Redact for every call: building one compiles a regex (milliseconds in a debug build,
    // which a chatty harness's thousands of observations would each pay).
    static NONE: OnceLock<Redact> = OnceLock::new();
    bound(apply(v, NONE.get_or_init(|| Redact::new("", ""))))
}

/// An observation over [`MAX_VALUE`] pretty-printed becomes a string: its start, cut and marked.
pub fn bound(v: Value) -> Value {
    let pretty = serde_json::to_string_pretty(&v).unwrap_or_default();
    if pretty.len() <= MAX_VALUE {
        return v;
    }
    let compact = v.to_string();
    let mut end = MAX_TEXT.min(compact.len());
    while !compact.is_char_boundary(end) {
        end -= 1;
    }
    Value::String(format!(
        "{}…[cut: {} bytes in all]",
        &compact[..end],
        compact.len()
    ))
}

/// The volatile paths of one case run.
#[derive(Debug, Clone)]
pub struct Redact {
    /// The case's temp dir (its workdir, probe reports and packs live inside).
    tmp: String,
    /// The runtime's bin directory.
    bin: String,
    /// The probe reports' paths, compiled once a text names one (most cases' texts never do).
    reports: std::sync::OnceLock<Regex>,
    /// Paths only, no caps or redaction: for judges that read observations (the fuzzer's
    /// oracles), never for what a report keeps.
    pub uncapped: bool,
}

impl Redact {
    pub fn new(tmp: &str, bin: &str) -> Redact {
        Redact {
            tmp: tmp.into(),
            bin: bin.into(),
            reports: std::sync::OnceLock::new(),
            uncapped: false,
        }
    }

    fn reports(&self) -> &Regex {
        self.reports.get_or_init(|| {
            Regex::new(&format!(
                r"{}/probe/report(\.[A-Za-z0-9_-]+)?\.json",
                regex::escape(&self.tmp)
            ))
            .expect("escaped")
        })
    }
}

fn text(s: &str, r: &Redact) -> String {
    if r.uncapped {
        return paths(s.to_string(), r);
    }
    // Secrets first, over the whole text: a cut never leaves the head of a secret behind. Then
    // cut to a bound that keeps the cut's marker honest, so that path redaction never walks
    // megabytes.
    let s = if s.len() > 4 * MAX_TEXT {
        let head = excerpt_text(s, 4 * MAX_TEXT);
        let head = contain_text(&paths(head, r));
        let head = head.split("…[cut: ").next().unwrap_or_default();
        return format!("{}…[cut: {} bytes in all]", cap(head), s.len());
    } else {
        s.to_string()
    };
    // 4. Values of hcpspec's own environment and secret-shaped tokens, then the size cap.
    contain_text(&paths(s, r))
}

/// Steps 1 and 2: the case's paths by their variables.
fn paths(mut s: String, r: &Redact) -> String {
    // 1. The workdir and the probe reports by their case variables, then the rest of the tmp dir.
    if !r.tmp.is_empty() && s.contains(&r.tmp) {
        s = s.replace(&format!("{}/work", r.tmp), "${workdir}");
        // Every match starts so: a text without it is left as the regex would leave it.
        if s.contains(&format!("{}/probe/report", r.tmp)) {
            s = r
                .reports()
                .replace_all(&s, |c: &regex::Captures| {
                    format!("${{report{}}}", c.get(1).map_or("", |m| m.as_str()))
                })
                .into_owned();
        }
        s = s.replace(&r.tmp, "${tmp}");
    }
    // 2. The bin directory (it is in the probe's PATH).
    if !r.bin.is_empty() {
        s = s.replace(&r.bin, "${bin}");
    }
    s
}

pub fn apply(v: &Value, r: &Redact) -> Value {
    match v {
        Value::String(s) => Value::String(text(s, r)),
        Value::Array(a) => Value::Array(a.iter().map(|x| apply(x, r)).collect()),
        Value::Object(m) => Value::Object(
            m.iter()
                .map(|(k, x)| {
                    // 3. Ids a runtime generates.
                    let x = if k == "runtime_id" && x.is_string() {
                        Value::String("[runtime_id]".into())
                    } else {
                        apply(x, r)
                    };
                    (text(k, r), x)
                })
                .collect(),
        ),
        // 5. A number that spells a value of hcpspec's environment.
        Value::Number(n) if !r.uncapped => {
            redact_number(n, secrets()).map_or_else(|| v.clone(), Value::String)
        }
        other => other.clone(),
    }
}

/// At most this many redactions a runtime may declare.
pub const MAX_REDACTIONS: usize = 32;
/// The longest pattern of a declared redaction, in bytes.
pub const MAX_PATTERN: usize = 512;
/// The longest placeholder of a declared redaction, in bytes.
pub const MAX_PLACEHOLDER: usize = 64;

/// A runtime's own redactions, declared in its `initialize` answer as `redactions: [{pattern,
/// placeholder}]`: what is random in its observations (a jail's name, a minted token). Applied
/// after hcpspec's own steps above, to every text and key of its observations: each match of
/// `pattern` (a `regex` crate regex) becomes `placeholder`, literally.
#[derive(Debug, Clone, Default)]
pub struct Declared {
    rules: Vec<(Regex, String)>,
}

impl Declared {
    /// The redactions of an `initialize` answer; none when it declares none. An error names the
    /// member (`redactions[2].pattern`) and what is wrong with it.
    pub fn from_initialize(info: &Value) -> Result<Declared, BadInput> {
        let Some(list) = info.get("redactions") else {
            return Ok(Declared::default());
        };
        let Some(list) = list.as_array() else {
            return Err(
                "`redactions`: expected an array of {\"pattern\": REGEX, \"placeholder\": TEXT}"
                    .into(),
            );
        };
        if list.len() > MAX_REDACTIONS {
            return Err(BadInput(format!(
                "`redactions`: {} redactions, at most {MAX_REDACTIONS}",
                list.len()
            )));
        }
        let mut rules = Vec::with_capacity(list.len());
        for (i, item) in list.iter().enumerate() {
            let at = format!("redactions[{i}]");
            let Some(m) = item.as_object() else {
                return Err(BadInput(format!(
                    "`{at}`: expected {{\"pattern\": REGEX, \"placeholder\": TEXT}}"
                )));
            };
            if let Some(k) = m
                .keys()
                .find(|k| !["pattern", "placeholder"].contains(&k.as_str()))
            {
                return Err(BadInput(format!(
                    "`{at}`: unknown member `{}` (a redaction has `pattern` and `placeholder`)",
                    cap_at(k, 64)
                )));
            }
            let text = |member: &str, max: usize| -> Result<String, String> {
                let v = m
                    .get(member)
                    .ok_or_else(|| format!("`{at}.{member}`: missing"))?;
                let v = v
                    .as_str()
                    .ok_or_else(|| format!("`{at}.{member}`: expected a string, got {v}"))?;
                if v.is_empty() || v.len() > max {
                    return Err(format!(
                        "`{at}.{member}`: {} bytes; expected 1 to {max}",
                        v.len()
                    ));
                }
                Ok(v.to_string())
            };
            let pattern = text("pattern", MAX_PATTERN)?;
            let placeholder = text("placeholder", MAX_PLACEHOLDER)?;
            if placeholder.chars().any(char::is_control) {
                return Err(BadInput(format!(
                    "`{at}.placeholder`: {placeholder:?} holds a control character"
                )));
            }
            let re = regex::RegexBuilder::new(&pattern)
                .size_limit(1 << 20)
                .dfa_size_limit(1 << 20)
                .build()
                .map_err(|e| {
                    let why = e.to_string().replace('\n', " ");
                    format!(
                        "`{at}.pattern`: {pattern:?} is not a regex hcpspec reads (Rust's regex crate): {}",
                        cap_at(why.split_whitespace().collect::<Vec<_>>().join(" ").as_str(), 400)
                    )
                })?;
            if re.is_match("") {
                return Err(BadInput(format!(
                    "`{at}.pattern`: {pattern:?} matches the empty string, so it would redact everywhere"
                )));
            }
            rules.push((re, placeholder));
        }
        Ok(Declared { rules })
    }

    pub fn is_empty(&self) -> bool {
        self.rules.is_empty()
    }

    /// One text with every declared redaction applied, in their order. A rule may not grow the
    /// text past [`MAX_TEXT`] (or its own length, when longer): past it the text is cut there
    /// and marked, so chained rules that each multiply it (`.` → 64 × `A`, `A` → 64 × `B`, …)
    /// never hold more than about one text's cap. Not contained: see [`Declared::apply`].
    pub fn text<'a>(&self, s: &'a str) -> Cow<'a, str> {
        let mut out = Cow::Borrowed(s);
        for (re, placeholder) in &self.rules {
            if re.is_match(&out) {
                out = Cow::Owned(replace_bounded(re, &out, placeholder));
            }
        }
        out
    }

    /// A value with every text and key redacted, then contained again as every observation is
    /// ([`contain`]): what a placeholder puts in (a value of hcpspec's environment, a
    /// secret-shaped token, a grown text) is redacted, cut and bounded like the runtime's own.
    pub fn apply(&self, v: &Value) -> Value {
        if self.is_empty() {
            return v.clone();
        }
        contain(&self.redact(v))
    }

    fn redact(&self, v: &Value) -> Value {
        match v {
            Value::String(s) => Value::String(self.text(s).into_owned()),
            Value::Array(a) => Value::Array(a.iter().map(|x| self.redact(x)).collect()),
            Value::Object(m) => Value::Object(
                m.iter()
                    .map(|(k, x)| (self.text(k).into_owned(), self.redact(x)))
                    .collect(),
            ),
            other => other.clone(),
        }
    }
}

/// `s` with every match of `re` replaced by `placeholder`, literally, building at most
/// max(`s.len()`, [`MAX_TEXT`]) bytes: past that the text is cut at [`MAX_TEXT`] and marked with
/// the size the whole replacement would have had.
fn replace_bounded(re: &Regex, s: &str, placeholder: &str) -> String {
    let limit = s.len().max(MAX_TEXT);
    let (mut out, mut last, mut total) = (String::new(), 0, s.len());
    for m in re.find_iter(s) {
        total = total - m.len() + placeholder.len();
        if out.len() <= limit {
            out.push_str(&s[last..m.start()]);
            out.push_str(placeholder);
        }
        last = m.end();
    }
    if out.len() <= limit {
        out.push_str(&s[last..]);
    }
    if total <= limit {
        return out;
    }
    let mut end = MAX_TEXT.min(out.len());
    while !out.is_char_boundary(end) {
        end -= 1;
    }
    out.truncate(end);
    out.push_str(&format!("…[cut: {total} bytes in all]"));
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_line_cut_leaves_no_head_of_a_secret_straddling_it() {
        let short = ("SHORT".to_string(), "Zq9vLp3xWm7tKr2d".to_string());
        let long = ("LONG".to_string(), "k".repeat(CUT_LOOKAHEAD + 100));
        let secrets = [long.clone(), short.clone()];
        // Held whole within the lookahead: redacted, then cut.
        let line = format!("{}{}", "A".repeat(95), short.1);
        assert_eq!(
            line_cut_of(line.as_bytes(), 100, &secrets),
            format!("{}[reda", "A".repeat(95))
        );
        // Longer than the lookahead: only its head is held, and it is cut off.
        let line = format!("{}{}", "A".repeat(90), long.1);
        let held = &line.as_bytes()[..100 + CUT_LOOKAHEAD];
        assert_eq!(line_cut_of(held, 100, &secrets), "A".repeat(90));
        // A line within the width is kept as it is, whatever it ends with.
        assert_eq!(line_cut_of(b"AAAAkkk", 100, &secrets), "AAAAkkk");
    }
    use serde_json::json;

    #[test]
    fn caps_long_texts_with_the_full_size() {
        let long = "x".repeat(7 << 20);
        let r = Redact::new("/tmp/hcpspec-caseAB", "/tmp/bin");
        let out = apply(&json!({ "error": long }), &r);
        let e = out["error"].as_str().unwrap();
        assert!(e.len() <= MAX_TEXT + 40, "{}", e.len());
        assert!(
            e.ends_with(&format!("…[cut: {} bytes in all]", 7 << 20)),
            "{}",
            &e[e.len() - 40..]
        );
        let many = json!(vec!["y".repeat(1000); 1000]);
        let bounded = bound(apply(&many, &r));
        assert!(serde_json::to_string_pretty(&bounded).unwrap().len() <= MAX_VALUE);
        assert!(bounded.as_str().unwrap().contains("…[cut: "));
        assert!(cap("é".repeat(MAX_TEXT).as_str()).len() <= MAX_TEXT + 40);
    }

    /// No variable hcpspec shows as it is is named like a credential's (`PWD`, the working
    /// directory, and `HCPSPEC_NOT_SECRET`, a list of names, aside); GitHub's and GitLab's
    /// tokens are.
    #[test]
    fn no_variable_shown_as_it_is_is_named_like_a_credential() {
        let aside = ["PWD", "HCPSPEC_NOT_SECRET"];
        for name in BORING.iter().filter(|n| !aside.contains(n)) {
            assert!(!credential_name(name), "{name}");
        }
        for name in [
            "GITHUB_TOKEN",
            "ACTIONS_RUNTIME_TOKEN",
            "ACTIONS_ID_TOKEN_REQUEST_TOKEN",
            "CI_JOB_TOKEN",
            "CI_REGISTRY_PASSWORD",
            "AWS_SECRET_ACCESS_KEY",
            "npm_authToken",
            "DB_PWD",
        ] {
            assert!(credential_name(name), "{name}");
        }
    }

    #[test]
    fn redacts_environment_values_and_secret_shapes() {
        let env = secrets_of([
            ("CI_SECRET".to_string(), "s3cr3t-value-123".to_string()),
            ("HOME".to_string(), "/home/someone-long".to_string()),
            ("SHORT".to_string(), "abc".to_string()),
        ]);
        assert_eq!(env.len(), 1);
        assert_eq!(
            redact_secrets("token=s3cr3t-value-123;", &env),
            "token=[redacted: $CI_SECRET];"
        );
        assert_eq!(
            redact_secrets(
                "AKIAABCDEFGHIJKLMNOP and ghp_0123456789abcdefghijklmnopqrstuvwxyz",
                &[]
            ),
            "[redacted: secret-shaped] and [redacted: secret-shaped]"
        );
        assert_eq!(redact_secrets("nothing here", &env), "nothing here");
    }

    #[test]
    fn redacts_spec_004_token_shapes_keeping_what_frames_them() {
        for (text, want) in [
            (
                "Authorization: Bearer leakybearer-0123456789abcdef",
                "Authorization: Bearer [redacted: secret-shaped]",
            ),
            (
                "HTTPS_PROXY=http://run:egress-token-42@127.0.0.1:3128",
                "HTTPS_PROXY=http://run:[redacted: secret-shaped]@127.0.0.1:3128",
            ),
            ("t=nylorun-ht-5f3e2d1c0b9a", "t=[redacted: secret-shaped]"),
            ("nylorun-rt-1-s2-abc123", "[redacted: secret-shaped]"),
            (
                "eyJhbGciOiJIUzI1NiJ9.eyJzdWIiOiJjYW5hcnkifQ.c2lnbmF0dXJlLWNhbmFyeQ",
                "[redacted: secret-shaped]",
            ),
            ("xoxp-1234567890-mnopqrstuvwx", "[redacted: secret-shaped]"),
            // What cases assert on stays: header names, ids, placeholders, short words.
            ("nylorun-harness-api: 1", "nylorun-harness-api: 1"),
            (
                "you sent me Bearer [redacted]",
                "you sent me Bearer [redacted]",
            ),
            (
                "task-0123456789abcdef0123456789abcdef01",
                "task-0123456789abcdef0123456789abcdef01",
            ),
            ("http://127.0.0.1:8080/x", "http://127.0.0.1:8080/x"),
        ] {
            assert_eq!(redact_secrets(text, &[]), want, "{text}");
        }
    }

    #[test]
    fn redacts_numbers_and_json_escaped_values_and_cuts_after_redaction() {
        let env = secrets_of([
            ("N".to_string(), "8675309123".to_string()),
            ("Q".to_string(), "ab\"c\\defgh".to_string()),
        ]);
        let n: serde_json::Number = serde_json::from_str("8675309123").unwrap();
        assert_eq!(redact_number(&n, &env).as_deref(), Some("[redacted: $N]"));
        assert_eq!(redact_number(&serde_json::Number::from(42), &env), None);
        assert_eq!(
            redact_secrets(r#"{"q": "ab\"c\\defgh"}"#, &env),
            r#"{"q": "[redacted: $Q]"}"#
        );
        // Contained twice is contained once.
        let capped = cap(&"x".repeat(MAX_TEXT * 2)).into_owned();
        assert_eq!(cap(&capped), capped);
    }

    #[test]
    fn redacts_paths_and_ids() {
        let r = Redact::new("/tmp/hcpspec-caseAB", "/tmp/hcpspec-binXY");
        let v = json!({
            "runtime_id": "rt-7",
            "cwd": "/tmp/hcpspec-caseAB/work",
            "argv": ["--report", "/tmp/hcpspec-caseAB/probe/report.second.json", "/tmp/hcpspec-caseAB/probe/report.json"],
            "env": { "PATH": "/tmp/hcpspec-binXY" },
            "dir": "/tmp/hcpspec-caseAB/packs/ledger"
        });
        assert_eq!(
            apply(&v, &r),
            json!({
                "runtime_id": "[runtime_id]",
                "cwd": "${workdir}",
                "argv": ["--report", "${report.second}", "${report}"],
                "env": { "PATH": "${bin}" },
                "dir": "${tmp}/packs/ledger"
            })
        );
    }

    #[test]
    fn chained_declared_redactions_never_grow_a_text_past_its_cap() {
        let rules: Vec<Value> = ["(?s).", "A", "B", "C", "D"]
            .windows(2)
            .map(|w| json!({ "pattern": w[0], "placeholder": w[1].repeat(64) }))
            .collect();
        let d = Declared::from_initialize(&json!({ "redactions": rules })).unwrap();
        for s in ["xy", "é", &"z".repeat(MAX_TEXT), &"w".repeat(2 * MAX_TEXT)] {
            let out = d.text(s);
            assert!(out.len() <= s.len().max(MAX_TEXT) + 40, "{}", out.len());
            assert!(out.starts_with(&"D".repeat(64)), "{}", &out[..80]);
            assert!(out.contains("…[cut: "), "{}", &out[out.len() - 40..]);
        }
        // A rule that shrinks or keeps a text is not cut, whatever its length.
        let jail = Declared::from_initialize(
            &json!({ "redactions": [{ "pattern": "jail-[a-z]{8}", "placeholder": "[jail]" }] }),
        )
        .unwrap();
        let long = "jail-abcdefgh ".repeat(1000);
        assert_eq!(jail.text(&long), "[jail] ".repeat(1000));
        assert_eq!(
            jail.apply(&json!({ "jail-qwertyui": ["in jail-zxcvbnmj"] })),
            json!({ "[jail]": ["in [jail]"] })
        );
    }

    #[test]
    fn a_runtime_declares_its_own_redactions_and_bad_ones_are_named() {
        let info = json!({ "redactions": [
            { "pattern": "jail-[a-z0-9_]{8}", "placeholder": "[jail]" },
            { "pattern": "mini-[0-9a-f]{16}", "placeholder": "[$token]" },
        ]});
        let d = Declared::from_initialize(&info).unwrap();
        assert_eq!(
            d.apply(&json!({
                "cwd": "${workdir}/jail-ab_3x9zq",
                "env": { "T": "mini-0123456789abcdef" },
                "jail-zzzzzzzz": [1, "jail-short"]
            })),
            json!({
                "cwd": "${workdir}/[jail]",
                "env": { "T": "[$token]" },
                "[jail]": [1, "jail-short"]
            }),
            "matches become the placeholder, literally ($ is no group)"
        );
        assert!(Declared::from_initialize(&json!({})).unwrap().is_empty());
        let many: Vec<_> = (0..=MAX_REDACTIONS)
            .map(|i| json!({ "pattern": format!("x{i}"), "placeholder": "[x]" }))
            .collect();
        for (bad, says) in [
            (json!("jail-"), "`redactions`: expected an array"),
            (
                json!([{ "pattern": "(", "placeholder": "[x]" }]),
                "`redactions[0].pattern`: \"(\" is not a regex",
            ),
            (
                json!([{ "pattern": "a", "placeholder": "[a]" }, { "pattern": "b*", "placeholder": "[b]" }]),
                "`redactions[1].pattern`: \"b*\" matches the empty string",
            ),
            (
                json!([{ "pattern": "a" }]),
                "`redactions[0].placeholder`: missing",
            ),
            (
                json!([{ "pattern": "a", "placeholder": "" }]),
                "`redactions[0].placeholder`: 0 bytes",
            ),
            (
                json!([{ "pattern": "a", "placeholder": "x".repeat(65) }]),
                "`redactions[0].placeholder`: 65 bytes; expected 1 to 64",
            ),
            (
                json!([{ "pattern": "a".repeat(513), "placeholder": "[a]" }]),
                "`redactions[0].pattern`: 513 bytes",
            ),
            (
                json!([{ "pattern": "a", "placeholder": "[\u{1b}]" }]),
                "holds a control character",
            ),
            (
                json!([{ "pattern": 7, "placeholder": "[a]" }]),
                "`redactions[0].pattern`: expected a string",
            ),
            (
                json!([{ "pattern": "a", "placeholder": "[a]", "replace": "b" }]),
                "unknown member `replace`",
            ),
            (
                json!([{ "pattern": "a{1000}{1000}", "placeholder": "[a]" }]),
                "`redactions[0].pattern`",
            ),
            (json!(many), "33 redactions, at most 32"),
        ] {
            let e = Declared::from_initialize(&json!({ "redactions": bad })).unwrap_err();
            assert!(e.0.contains(says), "{e} lacks {says}");
            assert!(!e.0.contains('\n'), "one line: {e}");
        }
    }
}
