//! The stand-in for a value the decoder has reported ([`super::de`]): a neutral value of
//! whatever the type asks for — zero, empty, none, the first variant, a struct with every
//! field standing in — so that the values around it are still decoded.

use serde::de::value::StrDeserializer;
use serde::de::{
    self, DeserializeSeed, Deserializer, EnumAccess, MapAccess, VariantAccess, Visitor,
};

use super::problem::DeError;

/// A neutral value of whatever is asked for, standing in for a reported one so that the
/// values around it are still decoded: zero, empty, none, the first variant, a struct with
/// every field standing in. A type whose first variant holds the type itself would stand in
/// forever: past [`Substitute::MAX_DEPTH`] nested stand-ins the value is given up instead.
pub(super) struct Substitute {
    depth: u8,
}

impl Substitute {
    const MAX_DEPTH: u8 = 16;

    pub(super) fn new() -> Substitute {
        Substitute { depth: 0 }
    }

    /// A stand-in for a value inside this one.
    fn inner(&self) -> Result<Substitute, DeError> {
        match self.depth < Self::MAX_DEPTH {
            true => Ok(Substitute {
                depth: self.depth + 1,
            }),
            false => Err(DeError::reported()),
        }
    }
}

impl<'de> Deserializer<'de> for Substitute {
    type Error = DeError;

    fn deserialize_any<V: Visitor<'de>>(self, visitor: V) -> Result<V::Value, DeError> {
        visitor.visit_unit()
    }

    fn deserialize_bool<V: Visitor<'de>>(self, visitor: V) -> Result<V::Value, DeError> {
        visitor.visit_bool(false)
    }

    fn deserialize_u64<V: Visitor<'de>>(self, visitor: V) -> Result<V::Value, DeError> {
        visitor.visit_u64(0)
    }

    fn deserialize_f64<V: Visitor<'de>>(self, visitor: V) -> Result<V::Value, DeError> {
        visitor.visit_f64(0.0)
    }

    fn deserialize_char<V: Visitor<'de>>(self, visitor: V) -> Result<V::Value, DeError> {
        visitor.visit_char('_')
    }

    fn deserialize_str<V: Visitor<'de>>(self, visitor: V) -> Result<V::Value, DeError> {
        visitor.visit_str("")
    }

    fn deserialize_option<V: Visitor<'de>>(self, visitor: V) -> Result<V::Value, DeError> {
        visitor.visit_none()
    }

    fn deserialize_newtype_struct<V: Visitor<'de>>(
        self,
        _name: &'static str,
        visitor: V,
    ) -> Result<V::Value, DeError> {
        visitor.visit_newtype_struct(self.inner()?)
    }

    fn deserialize_seq<V: Visitor<'de>>(self, visitor: V) -> Result<V::Value, DeError> {
        visitor.visit_seq(de::value::SeqDeserializer::new(std::iter::empty::<()>()))
    }

    fn deserialize_map<V: Visitor<'de>>(self, visitor: V) -> Result<V::Value, DeError> {
        visitor.visit_map(de::value::MapDeserializer::new(
            std::iter::empty::<((), ())>(),
        ))
    }

    fn deserialize_struct<V: Visitor<'de>>(
        self,
        _name: &'static str,
        fields: &'static [&'static str],
        visitor: V,
    ) -> Result<V::Value, DeError> {
        visitor.visit_map(Fields {
            fields,
            next: 0,
            depth: self.inner()?,
        })
    }

    fn deserialize_enum<V: Visitor<'de>>(
        self,
        _name: &'static str,
        variants: &'static [&'static str],
        visitor: V,
    ) -> Result<V::Value, DeError> {
        let Some(first) = variants.first() else {
            return Err(DeError::reported());
        };
        visitor.visit_enum(SubstituteVariant(first, self.inner()?))
    }

    fn deserialize_ignored_any<V: Visitor<'de>>(self, visitor: V) -> Result<V::Value, DeError> {
        visitor.visit_unit()
    }

    serde::forward_to_deserialize_any! {
        unit unit_struct bytes byte_buf identifier
    }

    forward! {
        deserialize_i8() => deserialize_u64,
        deserialize_i16() => deserialize_u64,
        deserialize_i32() => deserialize_u64,
        deserialize_i64() => deserialize_u64,
        deserialize_u8() => deserialize_u64,
        deserialize_u16() => deserialize_u64,
        deserialize_u32() => deserialize_u64,
        deserialize_f32() => deserialize_f64,
        deserialize_string() => deserialize_str,
        deserialize_tuple(usize) => deserialize_seq,
        deserialize_tuple_struct(&'static str, usize) => deserialize_seq,
    }
}

/// Every field of a struct, each standing in.
struct Fields {
    fields: &'static [&'static str],
    next: usize,
    /// The stand-in each field's value is made from.
    depth: Substitute,
}

impl<'de> MapAccess<'de> for Fields {
    type Error = DeError;

    fn next_key_seed<K: DeserializeSeed<'de>>(
        &mut self,
        seed: K,
    ) -> Result<Option<K::Value>, DeError> {
        let Some(field) = self.fields.get(self.next) else {
            return Ok(None);
        };
        self.next += 1;
        seed.deserialize(StrDeserializer::<DeError>::new(field))
            .map(Some)
    }

    fn next_value_seed<V: DeserializeSeed<'de>>(&mut self, seed: V) -> Result<V::Value, DeError> {
        seed.deserialize(self.depth.inner()?)
    }
}

/// The first variant of an enum, its value standing in.
struct SubstituteVariant(&'static str, Substitute);

impl<'de> EnumAccess<'de> for SubstituteVariant {
    type Error = DeError;
    type Variant = Substitute;

    fn variant_seed<V: DeserializeSeed<'de>>(
        self,
        seed: V,
    ) -> Result<(V::Value, Substitute), DeError> {
        let variant = seed.deserialize(StrDeserializer::<DeError>::new(self.0))?;
        Ok((variant, self.1))
    }
}

impl<'de> VariantAccess<'de> for Substitute {
    type Error = DeError;

    fn unit_variant(self) -> Result<(), DeError> {
        Ok(())
    }

    fn newtype_variant_seed<T: DeserializeSeed<'de>>(self, seed: T) -> Result<T::Value, DeError> {
        seed.deserialize(self)
    }

    fn tuple_variant<V: Visitor<'de>>(self, _len: usize, visitor: V) -> Result<V::Value, DeError> {
        self.deserialize_seq(visitor)
    }

    fn struct_variant<V: Visitor<'de>>(
        self,
        fields: &'static [&'static str],
        visitor: V,
    ) -> Result<V::Value, DeError> {
        self.deserialize_struct("", fields, visitor)
    }
}
