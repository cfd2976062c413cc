//! Whole answers in the in-memory store: streams whose one event, their response, was sent at
//! once (`sse_responses`). They are most of what a busy endpoint keeps.
//!
//! - **Blocks.** Answers are packed into blocks filled in order, so keeping one allocates
//!   nothing of its own, and they leave a block at a time, oldest first. Kept in four
//!   allocations each, a long run's answers fragmented the heap and slowed every allocation of
//!   the server (over 50 000 `create_user` calls answered so, 25.2 µs of CPU a call against
//!   18.1 µs with blocks).
//! - **Names.** The store names each answer's stream after the answer's number, so that a
//!   resume finds it without an index. A map from every kept answer's name to its place took
//!   a cache miss or more per answer, to add it and again to drop it, and a rehash of the
//!   whole map now and then. The number is enciphered with a secret key (AES), so a name
//!   tells nothing of how many answers there were, and half of what is enciphered is zeros
//!   that a name of another's making decrypts to only by a chance of one in 2^64: the name is
//!   unguessable. (A pad drawn from the SHA-256 of a secret and a random nonce did the same
//!   for some 3 400 instructions an answer on a CPU without SHA instructions, where AES takes
//!   about a hundred with AES-NI.)

use std::collections::VecDeque;
use std::time::{Duration, Instant};

use aes::Aes128;
use aes::cipher::{Array, BlockCipherDecrypt, BlockCipherEncrypt, KeyInit};

/// The most a block of answers holds, unless one answer is larger (it gets a block of its
/// own); at most 1/64 of the store's bound, so that a block dropped for room is a small part.
pub(super) const BLOCK: usize = 64 << 10;

/// Whole answers in blocks filled in the order they were written; the oldest block goes
/// first, whole, when it expires or when the store needs room (a resume of its answers is
/// then told their streams are unknown).
#[derive(Default)]
pub(super) struct Answers {
    pub(super) blocks: VecDeque<Block>,
    /// The number the next answer gets.
    next: u64,
}

pub(super) struct Block {
    /// The number of its first answer; the others follow it.
    first: u64,
    /// The answers' owners and messages, one after the other.
    text: String,
    answers: Vec<Answer>,
}

pub(super) struct Answer {
    pub(super) written: Instant,
    /// Where its owner starts in the block's text; its message follows it.
    start: usize,
    owner_len: usize,
    /// The message's length, `None` when it was too large to keep.
    data_len: Option<usize>,
}

/// Counts only: the answers' names and texts stay out of debug output (a name lets
/// its holder read the answer again).
impl std::fmt::Debug for Answers {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Answers")
            .field("blocks", &self.blocks.len())
            .field(
                "kept",
                &self.blocks.iter().map(|b| b.answers.len()).sum::<usize>(),
            )
            .field("next", &self.next)
            .finish()
    }
}

/// The key stays out of debug output.
impl std::fmt::Debug for Names {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Names").finish_non_exhaustive()
    }
}

impl Block {
    pub(super) fn owner(&self, answer: &Answer) -> &str {
        &self.text[answer.start..answer.start + answer.owner_len]
    }

    pub(super) fn data(&self, answer: &Answer) -> Option<&str> {
        let from = answer.start + answer.owner_len;
        Some(&self.text[from..from + answer.data_len?])
    }

    /// When its last answer was written.
    fn written(&self) -> Option<Instant> {
        self.answers.last().map(|a| a.written)
    }

    /// The number after its last answer.
    fn end(&self) -> u64 {
        self.first + self.answers.len() as u64
    }
}

impl Answers {
    /// Keeps an answer (`data`: `None` when it is too large to keep) in blocks of at most
    /// `block.0` bytes and `block.1` answers, under the name `names` gives it, as written
    /// `now`; its name and the bytes it takes.
    pub(super) fn add(
        &mut self,
        names: &Names,
        owner: &str,
        data: Option<&str>,
        (block, per_block): (usize, usize),
        now: Instant,
    ) -> Option<(String, usize)> {
        let number = self.next;
        let name = names.name(number);
        self.next += 1;
        let need = owner.len() + data.map_or(0, str::len);
        let fits = self.blocks.back().is_some_and(|b| {
            b.text.len() + need <= b.text.capacity() && b.answers.len() < per_block
        });
        if !fits {
            self.blocks.push_back(Block {
                first: number,
                text: String::with_capacity(need.max(block)),
                answers: Vec::new(),
            });
        }
        let block = self.blocks.back_mut()?;
        let start = block.text.len();
        block.text.push_str(owner);
        block.text.push_str(data.unwrap_or(""));
        block.answers.push(Answer {
            written: now,
            start,
            owner_len: owner.len(),
            data_len: data.map(str::len),
        });
        Some((name, need))
    }

    /// The answer `name` names, if it is still kept.
    pub(super) fn get(&self, names: &Names, name: &str) -> Option<(&Block, &Answer)> {
        let number = names.read(name)?;
        let at = self.blocks.partition_point(|b| b.end() <= number);
        let block = self.blocks.get(at)?;
        let answer = block
            .answers
            .get(usize::try_from(number.checked_sub(block.first)?).ok()?)?;
        Some((block, answer))
    }

    /// When the oldest block was last written (`but_last`: unless it is the newest).
    pub(super) fn oldest(&self, but_last: bool) -> Option<Instant> {
        if but_last && self.blocks.len() < 2 {
            return None;
        }
        self.blocks.front()?.written()
    }

    /// How many answers are kept.
    #[cfg(test)]
    pub(super) fn kept(&self) -> usize {
        self.blocks.iter().map(|b| b.answers.len()).sum()
    }

    /// Forgets the oldest block; the bytes and the answers freed.
    pub(super) fn drop_oldest(&mut self) -> (usize, usize) {
        self.blocks
            .pop_front()
            .map_or((0, 0), |block| (block.text.len(), block.answers.len()))
    }

    /// Forgets the blocks whose last answer was written `ttl` ago or more; the bytes and the
    /// answers freed.
    pub(super) fn expire(&mut self, ttl: Duration) -> (usize, usize) {
        let (mut bytes, mut answers) = (0, 0);
        while self
            .blocks
            .front()
            .is_some_and(|b| b.written().is_none_or(|w| w.elapsed() >= ttl))
        {
            let (b, a) = self.drop_oldest();
            bytes += b;
            answers += a;
        }
        (bytes, answers)
    }
}

/// How answers are named: 32 lowercase hex digits, the answer's number (8 bytes, big-endian)
/// and 8 zero bytes enciphered with a random key of the store's.
pub(super) struct Names {
    key: Aes128,
}

impl Names {
    /// `None` without system randomness.
    pub(super) fn new() -> Option<Names> {
        let mut key = [0; 16];
        getrandom::fill(&mut key).ok()?;
        Some(Names {
            key: Aes128::new(&Array(key)),
        })
    }

    /// The name of answer `number`.
    fn name(&self, number: u64) -> String {
        let mut block = Array([0; 16]);
        block[..8].copy_from_slice(&number.to_be_bytes());
        self.key.encrypt_block(&mut block);
        const DIGITS: &[u8; 16] = b"0123456789abcdef";
        let mut text = [0; 32];
        for (pair, byte) in text.chunks_exact_mut(2).zip(block.iter()) {
            pair.copy_from_slice(&[
                DIGITS[usize::from(byte >> 4)],
                DIGITS[usize::from(byte & 15)],
            ]);
        }
        // Hex digits are ASCII: the bytes are text.
        String::from_utf8(text.to_vec()).unwrap_or_default()
    }

    /// The number a name of ours holds.
    fn read(&self, name: &str) -> Option<u64> {
        let name = name.as_bytes();
        if name.len() != 32 {
            return None;
        }
        let mut block = Array([0; 16]);
        for (byte, pair) in block.iter_mut().zip(name.chunks_exact(2)) {
            *byte = (lower_hex(pair[0])? << 4) | lower_hex(pair[1])?;
        }
        self.key.decrypt_block(&mut block);
        let (number, zeros) = block.split_at(8);
        // Only a name this store made holds its zeros.
        let number = u64::from_be_bytes(number.try_into().ok()?);
        (u64::from_be_bytes(zeros.try_into().ok()?) == 0).then_some(number)
    }
}

/// The value of a lowercase hex digit.
fn lower_hex(digit: u8) -> Option<u8> {
    match digit {
        b'0'..=b'9' => Some(digit - b'0'),
        b'a'..=b'f' => Some(digit - b'a' + 10),
        _ => None,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_name_reads_back_only_with_its_zeros() {
        let names = Names::new().unwrap();
        let name = names.name(7);
        assert_eq!(name.len(), 32);
        assert_eq!(names.read(&name), Some(7));
        assert_ne!(names.name(8)[..16], name[..16]);
        // The same number enciphered with a bit set in the other half: not a name of ours.
        let mut block = Array([0; 16]);
        block[..8].copy_from_slice(&7u64.to_be_bytes());
        block[15] = 1;
        names.key.encrypt_block(&mut block);
        assert_eq!(names.read(&super::super::hex(&block)), None);
        assert_eq!(names.read(&name.to_uppercase()), None);
        assert_eq!(names.read(&name[..31]), None);
    }
}
