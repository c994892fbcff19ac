//! How the decoder walks into a value: the elements of an array, the entries of a table
//! (keys a struct names first), and names — a table's keys and an enum's variants.

use serde::de::value::StrDeserializer;
use serde::de::{
    self, DeserializeSeed, Deserializer, EnumAccess, MapAccess, SeqAccess, VariantAccess, Visitor,
};

use super::{De, DeError, Problem};
use crate::user_file::tree::{Entry, Node};

/// The elements of an array; the first that fails ends it.
pub(super) struct Seq<'a> {
    pub items: std::slice::Iter<'a, Node>,
    pub de: De<'a>,
    pub stopped: bool,
}

impl<'de> SeqAccess<'de> for Seq<'_> {
    type Error = DeError;

    fn next_element_seed<T: DeserializeSeed<'de>>(
        &mut self,
        seed: T,
    ) -> Result<Option<T::Value>, DeError> {
        if self.stopped {
            return Ok(None);
        }
        let Some(item) = self.items.next() else {
            return Ok(None);
        };
        let de = self.de.child(item, None);
        match seed.deserialize(de) {
            Ok(value) => Ok(Some(value)),
            Err(error) => {
                // Reported where it was found (a seed's own complaint, at the element).
                let _ = de.finish::<()>(Err(error), true);
                self.stopped = true;
                Ok(None)
            }
        }
    }

    fn size_hint(&self) -> Option<usize> {
        Some(self.items.len())
    }
}

/// The entries of a table.
pub(super) struct Map<'a> {
    pub entries: Vec<&'a Entry>,
    pub next: usize,
    pub value: Option<&'a Entry>,
    /// The keys of the struct being decoded, when it is one.
    pub fields: Option<&'static [&'static str]>,
    pub de: De<'a>,
}

impl<'de> MapAccess<'de> for Map<'_> {
    type Error = DeError;

    fn next_key_seed<K: DeserializeSeed<'de>>(
        &mut self,
        seed: K,
    ) -> Result<Option<K::Value>, DeError> {
        let Some(&entry) = self.entries.get(self.next) else {
            return Ok(None);
        };
        self.next += 1;
        let key = Named {
            name: &entry.key,
            de: None,
        };
        match seed.deserialize(key) {
            Ok(key) => {
                // A key refused by its type's own check (a check name), located at the key.
                for message in super::deferred::take() {
                    let problem = Problem::Custom(message);
                    self.de.cx.report(&entry.key_pos, &problem, self.de.field);
                }
                self.value = Some(entry);
                Ok(Some(key))
            }
            Err(error) => match (error.into_problem(), self.fields) {
                (Some(Problem::UnknownField { expected, .. }), Some(fields)) => {
                    // Unknown keys come last: this one and every later one are refused.
                    for later in &self.entries[self.next - 1..] {
                        if later.key == entry.key || !fields.contains(&later.key.as_str()) {
                            let problem = Problem::UnknownField {
                                name: later.key.clone(),
                                expected,
                            };
                            self.de.cx.report(&later.key_pos, &problem, self.de.field);
                        }
                    }
                    self.next = self.entries.len();
                    Ok(None)
                }
                (Some(problem), _) => {
                    Err(self.de.cx.report(&entry.key_pos, &problem, self.de.field))
                }
                (None, _) => Err(DeError::reported()),
            },
        }
    }

    fn next_value_seed<V: DeserializeSeed<'de>>(&mut self, seed: V) -> Result<V::Value, DeError> {
        let Some(entry) = self.value.take() else {
            return Err(de::Error::custom("a value was asked for before its key"));
        };
        let de = self.de.child(&entry.value, Some(entry));
        seed.deserialize(de)
            .or_else(|error| de.finish(Err(error), true))
    }

    fn size_hint(&self) -> Option<usize> {
        Some(self.entries.len() - self.next)
    }
}

/// A name: a table's key, or an enum's variant (with its value, when written as a table).
pub(super) struct Named<'a> {
    pub name: &'a str,
    pub de: Option<De<'a>>,
}

impl<'de> Deserializer<'de> for Named<'_> {
    type Error = DeError;

    fn deserialize_any<V: Visitor<'de>>(self, visitor: V) -> Result<V::Value, DeError> {
        visitor.visit_str(self.name)
    }

    fn deserialize_enum<V: Visitor<'de>>(
        self,
        _name: &'static str,
        variants: &'static [&'static str],
        visitor: V,
    ) -> Result<V::Value, DeError> {
        if variants.contains(&self.name) {
            visitor.visit_enum(self)
        } else {
            Err(de::Error::unknown_variant(self.name, variants))
        }
    }

    serde::forward_to_deserialize_any! {
        bool i8 i16 i32 i64 i128 u8 u16 u32 u64 u128 f32 f64 char str string
        bytes byte_buf option unit unit_struct newtype_struct seq tuple
        tuple_struct map struct identifier ignored_any
    }
}

impl<'de, 'a> EnumAccess<'de> for Named<'a> {
    type Error = DeError;
    type Variant = Under<'a>;

    fn variant_seed<V: DeserializeSeed<'de>>(
        self,
        seed: V,
    ) -> Result<(V::Value, Self::Variant), DeError> {
        let variant = seed.deserialize(StrDeserializer::<DeError>::new(self.name))?;
        Ok((variant, Under(self.de)))
    }
}

/// A variant's value: none for a name alone, else the value written under it.
pub(super) struct Under<'a>(Option<De<'a>>);

impl<'de> VariantAccess<'de> for Under<'_> {
    type Error = DeError;

    fn unit_variant(self) -> Result<(), DeError> {
        match self.0 {
            None => Ok(()),
            Some(de) => de::Deserialize::deserialize(de),
        }
    }

    fn newtype_variant_seed<T: DeserializeSeed<'de>>(self, seed: T) -> Result<T::Value, DeError> {
        match self.0 {
            Some(de) => seed.deserialize(de),
            None => Err(de::Error::invalid_type(
                de::Unexpected::UnitVariant,
                &"a value under the name",
            )),
        }
    }

    fn tuple_variant<V: Visitor<'de>>(self, _len: usize, visitor: V) -> Result<V::Value, DeError> {
        match self.0 {
            Some(de) => de.deserialize_seq(visitor),
            None => Err(de::Error::invalid_type(
                de::Unexpected::UnitVariant,
                &visitor,
            )),
        }
    }

    fn struct_variant<V: Visitor<'de>>(
        self,
        fields: &'static [&'static str],
        visitor: V,
    ) -> Result<V::Value, DeError> {
        match self.0 {
            Some(de) => de.deserialize_struct("", fields, visitor),
            None => Err(de::Error::invalid_type(
                de::Unexpected::UnitVariant,
                &visitor,
            )),
        }
    }
}
