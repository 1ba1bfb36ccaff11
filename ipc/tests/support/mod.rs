//! What the ipc crate's tests share.

use serde::de::{DeserializeOwned, Error as _, Visitor};

/// The serde names of an enum's variants, in declaration order, as its
/// derived `Deserialize` declares them (so a list follows the type, not
/// the test). Fails for a type that is not an enum.
pub fn variant_names<T: DeserializeOwned>() -> Vec<&'static str> {
    struct Probe<'a>(&'a mut Vec<&'static str>);

    impl<'de> serde::Deserializer<'de> for Probe<'_> {
        type Error = serde::de::value::Error;

        fn deserialize_any<V: Visitor<'de>>(self, _visitor: V) -> Result<V::Value, Self::Error> {
            Err(Self::Error::custom("only enums are probed"))
        }

        fn deserialize_enum<V: Visitor<'de>>(
            self,
            _name: &'static str,
            variants: &'static [&'static str],
            _visitor: V,
        ) -> Result<V::Value, Self::Error> {
            self.0.extend_from_slice(variants);
            Err(Self::Error::custom("probed"))
        }

        serde::forward_to_deserialize_any! {
            bool i8 i16 i32 i64 i128 u8 u16 u32 u64 u128 f32 f64 char str string bytes byte_buf
            option unit unit_struct newtype_struct seq tuple tuple_struct map struct identifier ignored_any
        }
    }

    let mut names = Vec::new();
    let _ = T::deserialize(Probe(&mut names));
    assert!(!names.is_empty(), "{} is not an enum", std::any::type_name::<T>());
    names
}
