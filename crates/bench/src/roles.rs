//! Who does what in a run of several processes (docs/benchmarks.md, "Pattern B", "Operational
//! mode", "field-io"): which ranks write and which read, whose data a reader reads, and which
//! writers write new data after a pre-populating run. The benchmarks number their data from a
//! [`Role`]: field-io's fields, ior's arrays, hammer's ensemble members and steps.

use fieldstore::{Error, ErrorKind, Result};

use crate::launch::Place;

/// An access pattern.
#[derive(Clone, Copy, Debug, PartialEq, Eq, clap::ValueEnum)]
pub enum Pattern {
    /// A write run, then (a run of its own) a read run of what was written.
    #[value(name = "A", alias = "a")]
    A,
    /// After a pre-populating write run, some ranks write new data while the others read the
    /// pre-populated data back (write+read contention).
    #[value(name = "B", alias = "b")]
    B,
}

/// What one process of a run does, and with whose data.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Role {
    /// Whether it reads (else it writes, or hammer's `--list` lists).
    pub reads: bool,
    /// The rank whose data it writes or reads: its own, or for a reader beside writers, the
    /// writer's it pairs with.
    pub owner: u32,
    /// Pattern B's writers: the data after what the pre-populating run wrote (new fields,
    /// later steps), written while the readers read that.
    pub after_prewrite: bool,
}

impl Role {
    /// A rank of field-io or ior (IOR's roles). Pattern A: every rank writes its own data or,
    /// with `read`, reads its own back, or with `reorder` the next rank's (IOR's `-C`, to
    /// defeat caches). Pattern B: even ranks write new data while each odd rank reads what
    /// the even rank before it pre-populated.
    pub fn of_pairs(place: &Place, pattern: Pattern, read: bool, reorder: bool) -> Role {
        let rank = place.rank;
        match pattern {
            Pattern::B if rank.is_multiple_of(2) => Role { reads: false, owner: rank, after_prewrite: true },
            Pattern::B => Role { reads: true, owner: rank - 1, after_prewrite: false },
            Pattern::A if read && reorder => Role { reads: true, owner: (rank + 1) % place.size, after_prewrite: false },
            Pattern::A => Role { reads: read, owner: rank, after_prewrite: false },
        }
    }

    /// A rank of hammer. With several processes in operational mode (`itt`) or pattern B, the
    /// first half of the ranks write while each rank of the second half reads the data of the
    /// writer at its place in the first half; otherwise every rank writes or, with `read`,
    /// reads its own data. Pattern B needs an even number of processes, at least two.
    pub fn of_halves(place: &Place, pattern: Pattern, itt: bool, read: bool) -> Result<Role> {
        if pattern == Pattern::B && (place.size < 2 || !place.size.is_multiple_of(2)) {
            return Err(Error::new(
                ErrorKind::BadRequest,
                "--pattern B needs an even number of processes (--procs): half write, half read",
            ));
        }
        let half = place.size / 2;
        let beside_writers = (itt || pattern == Pattern::B) && place.size > 1 && place.rank >= half;
        Ok(Role {
            reads: read || beside_writers,
            owner: if beside_writers { place.rank - half } else { place.rank },
            after_prewrite: pattern == Pattern::B && !beside_writers,
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn place(rank: u32, size: u32) -> Place {
        Place { rank, size, node: "n".into() }
    }

    fn roles(size: u32, role: impl Fn(&Place) -> Role) -> Vec<(bool, u32, bool)> {
        (0..size).map(|rank| role(&place(rank, size))).map(|r| (r.reads, r.owner, r.after_prewrite)).collect()
    }

    #[test]
    fn pairs_write_or_read_their_own_or_the_next_ranks_and_pattern_b_pairs_neighbours() {
        let of = |pattern, read, reorder| move |p: &Place| Role::of_pairs(p, pattern, read, reorder);
        assert_eq!(
            roles(3, of(Pattern::A, false, true)),
            [(false, 0, false), (false, 1, false), (false, 2, false)],
            "writers ignore reorder"
        );
        assert_eq!(roles(3, of(Pattern::A, true, false)), [(true, 0, false), (true, 1, false), (true, 2, false)]);
        assert_eq!(roles(3, of(Pattern::A, true, true)), [(true, 1, false), (true, 2, false), (true, 0, false)]);
        let b = [(false, 0, true), (true, 0, false), (false, 2, true), (true, 2, false)];
        assert_eq!(roles(4, of(Pattern::B, false, false)), b);
        assert_eq!(roles(4, of(Pattern::B, true, true)), b, "pattern B's roles ignore --read and --reorder");
    }

    #[test]
    fn halves_pair_each_reader_with_a_writer_of_the_first_half() {
        let of = |pattern, itt, read| move |p: &Place| Role::of_halves(p, pattern, itt, read).unwrap();
        assert_eq!(roles(2, of(Pattern::A, false, false)), [(false, 0, false), (false, 1, false)]);
        assert_eq!(roles(2, of(Pattern::A, false, true)), [(true, 0, false), (true, 1, false)]);
        assert_eq!(roles(4, of(Pattern::A, true, false)), [(false, 0, false), (false, 1, false), (true, 0, false), (true, 1, false)]);
        assert_eq!(roles(1, of(Pattern::A, true, false)), [(false, 0, false)], "alone, an operational-mode process writes");
        assert_eq!(roles(4, of(Pattern::B, false, false)), [(false, 0, true), (false, 1, true), (true, 0, false), (true, 1, false)]);
        assert_eq!(roles(2, of(Pattern::B, false, true)), [(true, 0, true), (true, 0, false)], "--read reads the new steps");
        for size in [1, 3] {
            let refused = Role::of_halves(&place(0, size), Pattern::B, false, false).unwrap_err();
            assert_eq!(refused.kind(), ErrorKind::BadRequest);
            assert!(refused.to_string().contains("even number of processes"), "{refused}");
        }
    }
}
