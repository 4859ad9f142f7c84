//! The reference core's freedom variant (`inproc:variant:freedom:SEED[:CLASS+…]`): every point
//! spec 004 leaves free, decided by the seed. Most open points already have an allowed variant
//! each (`knobs.rs`); the freedom takes each of them by a coin of its class, so a seed plays a
//! core that decides many of them otherwise at once, and declares what it chose through
//! `core.start`'s answer (`failure`, `names`, `purposeAt`) as a stranger's shim would. The rest
//! (ids and messages it words, lists it orders, members it adds, answers it delays) is applied
//! where the World mints or answers them, through [`id`], [`message`], [`permute`] and [`extra`].

use super::knobs::{Mutant, Variant};
use crate::knob::{Class, Knobs};
use serde_json::Value;

/// The class of open point each allowed variant decides, when the freedom variant may take it.
fn class_of(v: Variant) -> Option<Class> {
    use Variant::*;
    Some(match v {
        // Another code of HARNESS_ERROR_CODES, other ids, other wording.
        UnknownMethodNotFound
        | RefusalsUnavailable
        | OtherIds
        | LimitMessagesReworded
        | TraceOfItsOwn => Class::Words,
        // Another shape of an answer, declared through core.start where a shim would.
        RenewOverOkFalse
        | InputAsText
        | Sha256Prefixed
        | BinaryFramesClose
        | PurposeOnTheEffect
        | ApprovalAsksTheHeldId
        | OversizedEntryKeepsTheRun
        | DiscoveryIsTheSnapshot
        | OutcomesByHash
        | McpShapedFailures
        | OtherWireNames
        | VersionsByName
        | MediaRefusalAsFailure
        | UsageRowForRefusedCall
        | CancelEndsTheConnection => Class::Shapes,
        // What a strict core may demand or refuse.
        DefinitionFileBareHex | OtherRuntimeOperationInvalid => Class::Preconditions,
        // A model call run without its intent: not a precondition demanded but one waived.
        ModelGateUnjournaled => Class::Shapes,
    })
}

/// Does this core decide `v`'s point otherwise: as the variant `v`, or as a freedom variant
/// whose seed took it.
pub fn decides(knobs: &Knobs<Mutant, Variant>, v: Variant) -> bool {
    if knobs.decides(v) {
        return true;
    }
    let Some(class) = class_of(v) else {
        return false;
    };
    knobs
        .free(class)
        .is_some_and(|f| f.coin(class, crate::knob::Knob::name(v)))
}

/// An id core mints (`text` the reference's), worded by the seed: letters, digits and `-`
/// only, so it stays a part of an effect id (`<turnId>:…`) and of a path.
pub fn id(knobs: &Knobs<Mutant, Variant>, site: &str, text: &str) -> String {
    let Some(f) = knobs.free(Class::Words) else {
        return text.to_string();
    };
    let w: String = f
        .word(site, text)
        .chars()
        .map(|c| if c.is_ascii_alphanumeric() { c } else { '-' })
        .collect();
    format!("{}-{}", w.trim_matches('-'), text)
        .trim_matches('-')
        .to_string()
}

/// A message core words (an error's, a failure's), worded by the seed. A limit_exceeded
/// message keeps the reference's words after its own, since it must name the limit and its
/// value (§ 1).
pub fn message(knobs: &Knobs<Mutant, Variant>, code: &str, text: &str) -> String {
    let Some(f) = knobs.free(Class::Words) else {
        return text.to_string();
    };
    let w = f.word(&format!("message:{code}"), text);
    match code.contains("limit") || code.contains("too-large") {
        true => format!("{w}: {text}"),
        false => w,
    }
}

/// `items` in an order the seed decides, where spec 004 fixes none.
pub fn permute<T>(knobs: &Knobs<Mutant, Variant>, site: &str, items: &mut [T]) {
    if let Some(f) = knobs.free(Class::Order) {
        f.permute(site, items);
    }
}

/// `v` (an object of a control answer, whose members the docs leave open) with a member more.
pub fn extra(knobs: &Knobs<Mutant, Variant>, site: &str, v: &mut Value) {
    if let Some(f) = knobs.free(Class::Extra) {
        f.extra(site, v);
    }
}

/// Each object of a list with a member more, every one by its place.
pub fn extra_each(knobs: &Knobs<Mutant, Variant>, site: &str, list: &mut [Value]) {
    for (i, v) in list.iter_mut().enumerate() {
        extra(knobs, &format!("{site}:{i}"), v);
    }
}

/// A delay at `site` of up to `max_ms`, 0 unless the seed takes time.
pub fn delay_ms(knobs: &Knobs<Mutant, Variant>, site: &str, max_ms: u64) -> u64 {
    knobs
        .free(Class::Time)
        .map_or(0, |f| f.delay_ms(site, max_ms))
}

/// Does the seed take the coin of `class` at `site`?
pub fn coin(knobs: &Knobs<Mutant, Variant>, class: Class, site: &str) -> bool {
    knobs.free(class).is_some_and(|f| f.coin(class, site))
}

/// The value of an output's `type` that says a turn completed, when this core words it its own
/// way (spec 004 prints turn.waiting and turn.failed, not this one; core.start answers
/// `turnCompleted`).
pub fn turn_completed(knobs: &Knobs<Mutant, Variant>) -> Option<&'static str> {
    coin(knobs, Class::Shapes, "turnCompleted").then_some("turn.done")
}

/// An artifact's content type, when this core takes it from the name rather than the writer's
/// word (§ 4b prints `contentType` in the metadata, not where it comes from).
pub fn content_type(knobs: &Knobs<Mutant, Variant>, name: &str) -> Option<&'static str> {
    coin(knobs, Class::Shapes, "contentType").then(|| match name.rsplit('.').next() {
        Some("txt") => "text/plain; charset=utf-8",
        Some("md") => "text/markdown; charset=utf-8",
        Some("json") => "application/json",
        _ => "application/octet-stream",
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::knob::Knob;

    /// Each coin of the freedom variant falls both ways over the eight seeds `cargo test` plays,
    /// so every open point is played decided otherwise by some seed, and as the reference by
    /// another.
    #[test]
    fn the_eight_seeds_take_each_open_point_both_ways() {
        let seeds = |site: &dyn Fn(&Knobs<Mutant, Variant>) -> bool| -> Vec<bool> {
            (1..=8)
                .map(|s| site(&Knobs::named(&format!("variant:freedom:{s}")).expect("named")))
                .collect()
        };
        let mut sites: Vec<(String, Vec<bool>)> = Variant::ALL
            .iter()
            .map(|v| (v.name().to_string(), seeds(&|k| decides(k, *v))))
            .collect();
        for (class, site) in [
            (Class::Shapes, "turnCompleted"),
            (Class::Shapes, "contentType"),
            (Class::Shapes, "short-reads"),
            (Class::Preconditions, "released-elsewhere"),
            (Class::Preconditions, "model-outcome-schema"),
            (Class::Time, "lost-at-drop"),
        ] {
            sites.push((site.to_string(), seeds(&|k| coin(k, class, site))));
        }
        let one_way: Vec<&String> = sites
            .iter()
            .filter(|(_, taken)| taken.iter().all(|t| *t) || taken.iter().all(|t| !*t))
            .map(|(name, _)| name)
            .collect();
        assert!(
            one_way.is_empty(),
            "taken by every seed or by none: {one_way:?}"
        );
    }

    #[test]
    fn a_worded_id_stays_a_part_of_an_effect_id() {
        let k = Knobs::<Mutant, Variant>::named("variant:freedom:3").expect("named");
        let id = id(&k, "turnId", "turn-1");
        assert_ne!(id, "turn-1");
        assert!(
            id.chars().all(|c| c.is_ascii_alphanumeric() || c == '-'),
            "{id}"
        );
        assert_eq!(id, super::id(&k, "turnId", "turn-1"));
        assert_ne!(id, super::id(&k, "turnId", "turn-2"));
    }
}
