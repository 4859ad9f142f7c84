use serde::{Deserialize, Serialize};
use std::collections::BTreeMap;

/// A loaded pack: the three files, typed. `skill` is `HARNESS.md` (None when the file is absent).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Pack {
    pub surface: Surface,
    pub policy: Policy,
    pub skill: Option<String>,
}

impl Pack {
    pub fn pack_id(&self) -> &str {
        &self.surface.pack_id
    }
    pub fn command(&self, verb_key: &str) -> Option<&Command> {
        self.surface
            .commands
            .iter()
            .find(|c| c.verb_key == verb_key)
    }
    /// The Policy row of a verb the pack has a command for: a verb it can run (row 5).
    pub fn runnable(&self, verb_key: &str) -> Option<&VerbPolicy> {
        self.policy
            .verbs
            .get(verb_key)
            .filter(|_| self.command(verb_key).is_some())
    }
    /// A pack needs a Binding unless it is public.
    pub fn needs_binding(&self) -> bool {
        !self.surface.public
    }
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Surface {
    pub hcp: String,
    pub pack_id: String,
    #[serde(
        default,
        deserialize_with = "de::some",
        skip_serializing_if = "Option::is_none"
    )]
    pub name: Option<String>,
    #[serde(
        default,
        deserialize_with = "de::some",
        skip_serializing_if = "Option::is_none"
    )]
    pub version: Option<String>,
    #[serde(default)]
    pub public: bool,
    #[serde(
        default,
        deserialize_with = "de::some_object",
        skip_serializing_if = "Option::is_none"
    )]
    pub binding: Option<BindingDecl>,
    #[serde(deserialize_with = "de::objects")]
    pub commands: Vec<Command>,
    #[serde(deserialize_with = "de::object")]
    pub wrap: Wrap,
    #[serde(
        default,
        deserialize_with = "de::some_object",
        skip_serializing_if = "Option::is_none"
    )]
    pub sense: Option<SenseDecl>,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "lowercase")]
pub enum BindingMode {
    User,
    Local,
    Mothership,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct BindingDecl {
    pub mode: BindingMode,
    pub hub: String,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Command {
    pub verb_key: String,
    #[serde(
        default,
        deserialize_with = "de::some",
        skip_serializing_if = "Option::is_none"
    )]
    pub command: Option<String>,
    #[serde(
        default,
        deserialize_with = "de::some",
        skip_serializing_if = "Option::is_none"
    )]
    pub summary: Option<String>,
    #[serde(
        default,
        deserialize_with = "de::object_map",
        skip_serializing_if = "BTreeMap::is_empty"
    )]
    pub args: BTreeMap<String, ArgSpec>,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct ArgSpec {
    #[serde(
        default,
        rename = "type",
        deserialize_with = "de::some",
        skip_serializing_if = "Option::is_none"
    )]
    pub ty: Option<String>,
    #[serde(default)]
    pub required: bool,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Wrap {
    #[serde(
        default,
        deserialize_with = "de::some",
        skip_serializing_if = "Option::is_none"
    )]
    pub bin: Option<String>,
    #[serde(
        default,
        deserialize_with = "de::some",
        skip_serializing_if = "Option::is_none"
    )]
    pub inproc: Option<String>,
    #[serde(default)]
    pub pass_through: bool,
    #[serde(
        default,
        deserialize_with = "de::object_map",
        skip_serializing_if = "BTreeMap::is_empty"
    )]
    pub commands: BTreeMap<String, WrapCommand>,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct WrapCommand {
    pub argv: Vec<String>,
}

#[derive(Debug, Clone, PartialEq, Default, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct SenseDecl {
    #[serde(default)]
    pub triggers: Vec<String>,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Policy {
    #[serde(deserialize_with = "de::object_map")]
    pub verbs: BTreeMap<String, VerbPolicy>,
    #[serde(
        default,
        deserialize_with = "de::object_map",
        skip_serializing_if = "BTreeMap::is_empty"
    )]
    pub triggers: BTreeMap<String, TriggerPolicy>,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "lowercase")]
pub enum Operation {
    Read,
    Write,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "lowercase")]
pub enum Land {
    Local,
    Brain,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Privacy {
    pub land: Land,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct VerbPolicy {
    pub operation: Operation,
    #[serde(default)]
    pub confirm: bool,
    #[serde(deserialize_with = "de::object")]
    pub privacy: Privacy,
}

#[derive(Debug, Clone, PartialEq, Default, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct TriggerPolicy {
    #[serde(
        default,
        deserialize_with = "de::some_object",
        skip_serializing_if = "Option::is_none"
    )]
    pub privacy: Option<Privacy>,
}

/// The enums of the pack files are JSON strings and nothing else (serde's derived enums would
/// also take `{"read": null}`, which the schemas reject).
macro_rules! string_enum {
    ($ty:ident { $($name:literal => $variant:ident),+ $(,)? }) => {
        impl<'de> Deserialize<'de> for $ty {
            fn deserialize<D: serde::Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
                struct V;
                impl serde::de::Visitor<'_> for V {
                    type Value = $ty;
                    fn expecting(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
                        f.write_str(concat!("one of" $(, " `", $name, "`")+))
                    }
                    fn visit_str<E: serde::de::Error>(self, s: &str) -> Result<$ty, E> {
                        match s {
                            $($name => Ok($ty::$variant),)+
                            _ => Err(E::unknown_variant(s, &[$($name),+])),
                        }
                    }
                }
                d.deserialize_str(V)
            }
        }
    };
}

string_enum!(BindingMode { "user" => User, "local" => Local, "mothership" => Mothership });
string_enum!(Operation { "read" => Read, "write" => Write });
string_enum!(Land { "local" => Local, "brain" => Brain });

/// Deserialisers that take exactly what the JSON Schemas allow, no more: an optional member is
/// absent or of its type (never `null`), and a struct is a JSON object (serde's derived structs
/// would also take an array of the fields in order). With `deny_unknown_fields` on every struct,
/// what the typed model accepts is what the schemas accept, apart from the string constraints
/// (patterns, lengths, enums of `type`, `oneOf` of wrap) that [`Surface::conforms`] checks.
pub(crate) mod de {
    use serde::de::value::MapAccessDeserializer;
    use serde::de::{Deserialize, Deserializer, MapAccess, Visitor};
    use std::collections::BTreeMap;
    use std::fmt;
    use std::marker::PhantomData;

    /// A `T` read from a JSON object only.
    pub struct Object<T>(pub T);

    impl<'de, T: Deserialize<'de>> Deserialize<'de> for Object<T> {
        fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
            struct V<T>(PhantomData<T>);
            impl<'de, T: Deserialize<'de>> Visitor<'de> for V<T> {
                type Value = T;
                fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
                    f.write_str("an object")
                }
                fn visit_map<A: MapAccess<'de>>(self, map: A) -> Result<T, A::Error> {
                    T::deserialize(MapAccessDeserializer::new(map))
                }
            }
            d.deserialize_map(V(PhantomData)).map(Object)
        }
    }

    pub fn some<'de, D: Deserializer<'de>, T: Deserialize<'de>>(
        d: D,
    ) -> Result<Option<T>, D::Error> {
        T::deserialize(d).map(Some)
    }

    pub fn object<'de, D: Deserializer<'de>, T: Deserialize<'de>>(d: D) -> Result<T, D::Error> {
        Object::deserialize(d).map(|o| o.0)
    }

    pub fn some_object<'de, D: Deserializer<'de>, T: Deserialize<'de>>(
        d: D,
    ) -> Result<Option<T>, D::Error> {
        object(d).map(Some)
    }

    pub fn objects<'de, D: Deserializer<'de>, T: Deserialize<'de>>(
        d: D,
    ) -> Result<Vec<T>, D::Error> {
        Vec::<Object<T>>::deserialize(d).map(|v| v.into_iter().map(|o| o.0).collect())
    }

    pub fn object_map<'de, D: Deserializer<'de>, T: Deserialize<'de>>(
        d: D,
    ) -> Result<BTreeMap<String, T>, D::Error> {
        // A key given twice keeps its last value, as in a `serde_json::Value`.
        BTreeMap::<String, Object<T>>::deserialize(d)
            .map(|m| m.into_iter().map(|(k, o)| (k, o.0)).collect())
    }
}

impl Surface {
    /// The constraints of `surface.schema.json` that the types do not carry: the patterns of
    /// `hcp`, `pack_id` and `verb_key`, the non-empty strings, the argument types, and exactly
    /// one of `wrap.bin` and `wrap.inproc`. A typed `Surface` that conforms is schema-valid.
    pub fn conforms(&self) -> bool {
        let hcp = self
            .hcp
            .strip_prefix("1.")
            .is_some_and(|n| !n.is_empty() && n.bytes().all(|b| b.is_ascii_digit()));
        let id = |s: &str, extra: &[u8]| {
            let b = s.as_bytes();
            (1..=64).contains(&b.len())
                && b[0].is_ascii_lowercase()
                && b[1..]
                    .iter()
                    .all(|c| c.is_ascii_lowercase() || c.is_ascii_digit() || extra.contains(c))
        };
        let nonempty = |s: &Option<String>| s.as_deref().is_none_or(|s| !s.is_empty());
        hcp && id(&self.pack_id, b"_-")
            && self.binding.as_ref().is_none_or(|b| !b.hub.is_empty())
            && self.commands.iter().all(|c| {
                id(&c.verb_key, b"_.-")
                    && c.args.values().all(|a| {
                        a.ty.as_deref().is_none_or(|t| {
                            matches!(t, "string" | "number" | "integer" | "boolean")
                        })
                    })
            })
            && nonempty(&self.wrap.bin)
            && nonempty(&self.wrap.inproc)
            && self.wrap.bin.is_some() != self.wrap.inproc.is_some()
            && self
                .sense
                .as_ref()
                .is_none_or(|s| s.triggers.iter().all(|t| !t.is_empty()))
    }
}
