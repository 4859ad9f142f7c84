//! Mutants and allowed variants as types, as BoGo's `ProtocolBugs` are fields and never strings:
//! each suite declares its own with [`mutants!`](crate::mutants) and
//! [`variants!`](crate::variants), and its reference asks `knobs.breaks(Mutant::X)` or
//! `knobs.decides(Variant::Y)`. A name that is no member does not compile.

/// One mutant (a rule broken) or one allowed variant (an open point decided otherwise).
pub trait Knob: Copy + Eq + std::fmt::Debug + Send + Sync + 'static {
    const ALL: &'static [Self];
    /// Its name in `inproc:mutant:NAME` / `inproc:variant:NAME`.
    fn name(self) -> &'static str;
    /// The rule a mutant breaks, or the point a variant decides otherwise.
    fn about(self) -> &'static str;
    /// The sections whose MUST cases must catch a mutant; none for a variant.
    fn sections(self) -> &'static [&'static str];
    fn by_name(name: &str) -> Option<Self> {
        Self::ALL.iter().copied().find(|k| k.name() == name)
    }
}

/// A suite's mutants: `Name = "name", ["section", …], "the rule it breaks";`.
#[macro_export]
macro_rules! mutants {
    ($(#[$attr:meta])* $vis:vis enum $T:ident {
        $($(#[$va:meta])* $V:ident = $name:literal, [$($sec:literal),+], $what:literal;)+
    }) => {
        $(#[$attr])*
        #[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
        $vis enum $T { $($(#[$va])* $V),+ }

        impl $crate::knob::Knob for $T {
            const ALL: &'static [$T] = &[$($T::$V),+];
            fn name(self) -> &'static str { match self { $($T::$V => $name),+ } }
            fn about(self) -> &'static str { match self { $($T::$V => $what),+ } }
            fn sections(self) -> &'static [&'static str] { match self { $($T::$V => &[$($sec),+]),+ } }
        }
    };
}

/// A suite's allowed variants: `Name = "name", "the point it decides otherwise";`.
#[macro_export]
macro_rules! variants {
    ($(#[$attr:meta])* $vis:vis enum $T:ident {
        $($(#[$va:meta])* $V:ident = $name:literal, $what:literal;)+
    }) => {
        $(#[$attr])*
        #[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
        $vis enum $T { $($(#[$va])* $V),+ }

        impl $crate::knob::Knob for $T {
            const ALL: &'static [$T] = &[$($T::$V),+];
            fn name(self) -> &'static str { match self { $($T::$V => $name),+ } }
            fn about(self) -> &'static str { match self { $($T::$V => $what),+ } }
            fn sections(self) -> &'static [&'static str] { &[] }
        }
    };
}

/// Which mutant or variant an embedded reference is, if any: at most one of the two (or, for a
/// suite that offers `variant:all`, every variant at once).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Knobs<M, V> {
    pub mutant: Option<M>,
    pub variant: Option<V>,
    /// Every allowed variant's choice at once: the runtime a stranger could write from the
    /// spec alone (the contract's `variant:all`).
    every_variant: bool,
}

impl<M, V> Default for Knobs<M, V> {
    fn default() -> Self {
        Knobs {
            mutant: None,
            variant: None,
            every_variant: false,
        }
    }
}

impl<M: Knob, V: Knob> Knobs<M, V> {
    /// `reference`, `mutant:NAME` or `variant:NAME`; any other name is none.
    pub fn named(name: &str) -> Option<Self> {
        if name == "reference" {
            return Some(Self::default());
        }
        if let Some(m) = name.strip_prefix("mutant:") {
            return Some(Knobs {
                mutant: Some(M::by_name(m)?),
                ..Self::default()
            });
        }
        Some(Knobs {
            variant: Some(V::by_name(name.strip_prefix("variant:")?)?),
            ..Self::default()
        })
    }

    /// Every allowed variant at once (`variant:all`, where a suite offers it).
    pub fn every_variant() -> Self {
        Knobs {
            every_variant: true,
            ..Self::default()
        }
    }

    /// Is this every allowed variant at once?
    pub fn is_every_variant(&self) -> bool {
        self.every_variant
    }

    /// Is this the mutant that breaks `m`'s rule?
    pub fn breaks(&self, m: M) -> bool {
        self.mutant == Some(m)
    }

    /// Is this the allowed variant that decides `v`'s point otherwise?
    pub fn decides(&self, v: V) -> bool {
        self.every_variant || self.variant == Some(v)
    }
}

/// A mutant or variant as listings and self-checks show it, whatever its suite.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Info {
    pub name: &'static str,
    pub about: &'static str,
    pub sections: &'static [&'static str],
}

/// Every member of a knob type, as [`Info`].
pub fn infos<K: Knob>() -> Vec<Info> {
    K::ALL
        .iter()
        .map(|k| Info {
            name: k.name(),
            about: k.about(),
            sections: k.sections(),
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    crate::mutants! {
        enum M { A = "a", ["1"], "breaks a"; B = "b", ["2", "3"], "breaks b"; }
    }
    crate::variants! {
        enum V { X = "x", "decides x"; }
    }

    #[test]
    fn names_parse_to_members_and_nothing_else() {
        let k = Knobs::<M, V>::named("mutant:b").unwrap();
        assert!(k.breaks(M::B) && !k.breaks(M::A) && !k.decides(V::X));
        assert!(Knobs::<M, V>::named("variant:x").unwrap().decides(V::X));
        assert_eq!(Knobs::<M, V>::named("reference"), Some(Knobs::default()));
        for bad in ["mutant:c", "variant:a", "x", "mutant:", ""] {
            assert_eq!(Knobs::<M, V>::named(bad), None, "{bad}");
        }
        assert_eq!(M::B.sections(), &["2", "3"]);
        assert_eq!(infos::<M>().len(), 2);
        let all = Knobs::<M, V>::every_variant();
        assert!(all.decides(V::X) && !all.breaks(M::A) && all.is_every_variant());
    }
}
