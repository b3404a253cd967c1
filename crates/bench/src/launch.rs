//! Where a benchmark process is: its rank, the number of processes and its node, from the
//! launcher's environment (Slurm, Open MPI, PMI) or from `FIELDSTORE_RANK`/`FIELDSTORE_SIZE`.

/// A process's place in a parallel run.
#[derive(Clone, Debug, PartialEq)]
pub struct Place {
    pub rank: u32,
    pub size: u32,
    pub node: String,
}

const RANK_VARIABLES: [&str; 4] = ["FIELDSTORE_RANK", "SLURM_PROCID", "OMPI_COMM_WORLD_RANK", "PMI_RANK"];
const SIZE_VARIABLES: [&str; 4] = ["FIELDSTORE_SIZE", "SLURM_NTASKS", "OMPI_COMM_WORLD_SIZE", "PMI_SIZE"];

impl Place {
    /// From the environment `lookup` gives (the process's own in practice).
    pub fn from_env(lookup: impl Fn(&str) -> Option<String>) -> Place {
        let first = |names: &[&str]| names.iter().find_map(|n| lookup(n)?.trim().parse::<u32>().ok());
        let node = lookup("SLURMD_NODENAME")
            .or_else(|| std::fs::read_to_string("/proc/sys/kernel/hostname").ok())
            .map(|h| h.trim().to_string())
            .unwrap_or_else(|| "localhost".into());
        let rank = first(&RANK_VARIABLES).unwrap_or(0);
        Place { rank, size: first(&SIZE_VARIABLES).unwrap_or(rank + 1).max(rank + 1), node }
    }

    pub fn current() -> Place {
        Place::from_env(|n| std::env::var(n).ok())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn launchers_are_recognised_in_order() {
        let env =
            |pairs: &'static [(&'static str, &'static str)]| move |n: &str| pairs.iter().find(|(k, _)| *k == n).map(|(_, v)| v.to_string());
        let slurm = Place::from_env(env(&[("SLURM_PROCID", "5"), ("SLURM_NTASKS", "48"), ("SLURMD_NODENAME", "nid001")]));
        assert_eq!(slurm, Place { rank: 5, size: 48, node: "nid001".into() });
        let mpi = Place::from_env(env(&[("OMPI_COMM_WORLD_RANK", "3"), ("OMPI_COMM_WORLD_SIZE", "4")]));
        assert_eq!((mpi.rank, mpi.size), (3, 4));
        let ours = Place::from_env(env(&[("FIELDSTORE_RANK", "1"), ("SLURM_PROCID", "9")]));
        assert_eq!((ours.rank, ours.size), (1, 2), "FIELDSTORE_RANK wins; size at least rank + 1");
        assert_eq!(Place::from_env(env(&[])).rank, 0);
    }
}
