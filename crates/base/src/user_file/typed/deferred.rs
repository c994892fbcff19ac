//! Refusals a type's own check makes while the decoder runs, handed to the decoder instead of
//! returned as serde errors, so that decoding goes on: the type yields a stand-in, the decoder
//! reports the refusal at the value (or key) being decoded, and the stand-in is never used
//! because a decode with a problem returns the problems.
//!
//! A serde error would end every table around the value (serde has consumed what would decode
//! it again), hiding the problems after it. The side channel is per thread and active only
//! inside [`super::decode`]; elsewhere (serde_json, TOML read directly) [`refuse`] declines and
//! the type returns its error as usual.

use std::cell::RefCell;

thread_local! {
    static DEFERRED: RefCell<Option<Vec<String>>> = const { RefCell::new(None) };
}

/// While alive, refusals on this thread are collected; dropping it restores what was before.
pub(super) struct Active(Option<Vec<String>>);

pub(super) fn activate() -> Active {
    Active(DEFERRED.with(|d| d.replace(Some(Vec::new()))))
}

impl Drop for Active {
    fn drop(&mut self) {
        let previous = self.0.take();
        DEFERRED.with(|d| *d.borrow_mut() = previous);
    }
}

/// Hands `message` to the running decoder (`Ok`), or gives it back when none runs here.
pub fn refuse(message: String) -> Result<(), String> {
    DEFERRED.with(|d| match d.borrow_mut().as_mut() {
        Some(list) => {
            list.push(message);
            Ok(())
        }
        None => Err(message),
    })
}

/// The refusals made since the last call.
pub(super) fn take() -> Vec<String> {
    DEFERRED.with(|d| {
        d.borrow_mut()
            .as_mut()
            .map(std::mem::take)
            .unwrap_or_default()
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn refusals_are_collected_only_while_a_decoder_runs() {
        assert_eq!(refuse("outside".into()), Err("outside".into()));
        {
            let _active = activate();
            assert_eq!(refuse("inside".into()), Ok(()));
            assert_eq!(take(), ["inside"]);
            assert!(take().is_empty());
        }
        assert_eq!(refuse("after".into()), Err("after".into()));
    }
}
