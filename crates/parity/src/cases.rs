//! The requests and tool calls sent to both systems. Each names the operation, the request,
//! and, where fieldstore deliberately answers otherwise than FDB5, the difference in
//! `docs/fdb5.md` that explains it.

/// An operation of the tools.
#[derive(Clone, Debug, PartialEq)]
pub enum Op {
    /// `fdb-list --porcelain --depth=N` / `fieldstore list --porcelain --depth N`.
    List {
        /// What to list: 1 data sets, 2 collocations, 3 fields.
        depth: u8,
    },
    /// `fdb-axes --json` / `fieldstore axes --json`: the values of each keyword.
    Axes,
    /// `fdb-read` / `fieldstore retrieve`: the bytes and their order.
    Retrieve,
    /// How many data sets `where` names.
    Where,
    /// How many fields `stats` counts.
    Stats,
    /// On a copy of the store: what a dry run names, or what is left after `--doit`.
    Wipe {
        /// Wipe (`--doit`) rather than only name what would go.
        doit: bool,
    },
    /// On a copy of the store: superseded fields counted by a dry run, or what is left.
    Purge {
        /// Purge (`--doit`) rather than only count what would go.
        doit: bool,
    },
}

impl Op {
    /// Whether the case changes the store (it then runs on a copy of each).
    pub fn removes(&self) -> bool {
        matches!(self, Op::Wipe { .. } | Op::Purge { .. })
    }
}

/// One request sent to both systems.
#[derive(Clone, Debug)]
pub struct Case {
    /// What is asked of both tools.
    pub op: Op,
    /// The request, as both tools' command lines take it.
    pub request: String,
    /// The difference in `docs/fdb5.md` (its heading's name) that explains why the answers
    /// differ; `None`: they must be the same.
    pub differs: Option<&'static str>,
}

impl std::fmt::Display for Case {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "{:?} {}", self.op, self.request)
    }
}

// Data sets of the corpus.
const OPER_00: &str = "class=od,expver=0001,stream=oper,date=20231201,time=0000";
const OPER_12: &str = "class=od,expver=0001,stream=oper,date=20231201,time=1200";
const ENFO: &str = "class=od,expver=0001,stream=enfo,date=20231201,time=0000,domain=g";
const WAVE: &str = "class=od,expver=0001,stream=wave,date=20231201,time=0000";

/// Collects cases.
#[derive(Default)]
struct Cases(Vec<Case>);

impl Cases {
    fn add(&mut self, op: Op, request: impl Into<String>, differs: Option<&'static str>) {
        self.0.push(Case { op, request: request.into(), differs });
    }
    fn list(&mut self, request: impl Into<String>) {
        self.add(Op::List { depth: 3 }, request, None);
    }
    fn retrieve(&mut self, request: impl Into<String>) {
        self.add(Op::Retrieve, request, None);
    }
}

/// Every case, in a fixed order.
pub fn all() -> Vec<Case> {
    let mut c = Cases::default();
    steps(&mut c);
    wave_spectra(&mut c);
    dates(&mut c);
    case_of_values(&mut c);
    parameters(&mut c);
    optional_keywords(&mut c);
    ranges(&mut c);
    retrieve_order(&mut c);
    unknown_values(&mut c);
    breadth(&mut c);
    removals(&mut c);
    c.0
}

/// Steps in minutes, hours and days, ranges of them, accumulations named by their end.
fn steps(c: &mut Cases) {
    let sfc = format!("{OPER_00},type=fc,levtype=sfc");
    for step in [
        "30",
        "30h",
        "30m",
        "0h30m",
        "90m",
        "1h30m",
        "1.5",
        "15m",
        "2h30m",
        "45m",
        "150m",
        "1d",
        "24",
        "24h",
        "1440m",
        "2d",
        "6",
        "12",
        "0-24",
        "0-6",
        "0/to/2d/by/1d",
        "0/to/24",
        "0/to/24/by/6",
        "24/to/0/by/12",
        "24/to/0",
        "24/to/0/by/-6",
        "0/to/90m/by/30m",
        "0/to/3h/by/15m",
        "30m/1h30m/30",
    ] {
        c.list(format!("{sfc},step={step}"));
    }
    c.add(Op::List { depth: 3 }, format!("{sfc},step=1h30"), Some("ambiguous-step"));
    c.add(Op::List { depth: 3 }, format!("{sfc},step=0/to/24/by/-6"), Some("negative-by-upwards"));
    for step in ["30m", "1h30m", "30", "1d"] {
        c.retrieve(format!("{sfc},step={step},param=167"));
    }
    // Step 6 and parameter 167 are stored, but not together.
    c.add(Op::Retrieve, format!("{sfc},step=6,param=167"), Some("combination-never-stored"));
    c.retrieve(format!("{sfc},step=24/1h30m/30m/30/2d,param=167"));
    c.retrieve(format!("{sfc},step=6/12/24,param=228/142/49/201/202"));
    c.add(Op::Axes, sfc.to_string(), None);
}

/// 2-D wave spectra (GRIB1 local definition 13): frequency and direction.
fn wave_spectra(c: &mut Cases) {
    let fc = format!("{WAVE},type=fc,levtype=sfc");
    c.list(format!("{fc},param=140251"));
    c.list(format!("{fc},param=2dfd,frequency=2"));
    c.list(format!("{fc},param=140251,frequency=1/3,direction=2/4,step=6"));
    c.list(format!("{fc},param=swh"));
    c.add(Op::Axes, fc.clone(), None);
    // The wave rule's `domain` has no default and `domain=unknown` is no MARS value: FDB5
    // cannot retrieve these fields at all.
    c.add(Op::Retrieve, format!("{fc},param=140251,step=6,frequency=3/1,direction=4/1"), Some("keyword-left-out"));
    c.add(Op::List { depth: 3 }, format!("{fc},domain=unknown,param=140229"), Some("domain-unknown"));
}

/// Dates in MARS forms, across data sets whose types read dates differently (mnth climate
/// months, moda without time).
fn dates(c: &mut Cases) {
    let od = "class=od,expver=0001";
    for date in [
        "20231130/to/20231201",
        "2023-12-01",
        "20231201",
        "20231101",
        "20231101/to/20231203/by/2",
        "20231202/to/20231201",
        "11",
        "nov",
        "november",
        "oct/to/dec",
        "december",
        "dec",
        "12",
    ] {
        c.list(format!("{od},date={date}"));
    }
    c.add(Op::List { depth: 1 }, format!("{od},date=20231201"), Some("depth-1-assertion"));
    for stream in ["mnth", "moda", "mmsf"] {
        c.list(format!("{od},stream={stream}"));
        c.add(Op::Axes, format!("{od},stream={stream}"), None);
    }
    c.list(format!("{od},stream=mnth,type=cl,date=20231130"));
    c.list(format!("{od},stream=mnth,type=an,date=20231101"));
    c.retrieve(format!("{od},stream=mnth,domain=g,type=cl,levtype=sfc,date=11/12,time=0000,param=167/151"));
    c.retrieve(format!("{od},stream=moda,date=20231101,domain=g,type=an,levtype=sfc,param=151/167"));
}

/// Upper- and mixed-case values; an experiment written in upper case in the GRIB.
fn case_of_values(c: &mut Cases) {
    for request in [
        "class=OD,expver=0001,stream=OPER,date=20231201,time=0000,type=FC,levtype=PL,step=0,levelist=500",
        "class=Od,expver=0001,stream=Enfo,domain=G,type=PF,levtype=Sfc,number=7,step=6",
        "class=od,expver=ABCD",
        "class=od,expver=abcd",
        "class=od,expver=AbCd,levtype=SFC",
        "class=od,expver=X0Y1",
    ] {
        c.list(request);
    }
    c.retrieve("class=od,expver=ABCD,stream=oper,date=20231201,time=0000,domain=g,type=fc,levtype=sfc,step=6/0,param=167");
    c.add(Op::List { depth: 1 }, "class=od,expver=abcd", None);
}

/// Parameter ids, `value.table` forms and names from ecCodes' parameter database.
fn parameters(c: &mut Cases) {
    let sfc = format!("{OPER_00},type=fc,levtype=sfc,step=6");
    for param in ["tp", "lsp", "10fg", "mx2t", "mn2t", "2t", "2T", "167", "167.128", "228.128", "tp/lsp/mx2t", "49.128", "228"] {
        c.list(format!("{sfc},param={param}"));
    }
    let pl = format!("{OPER_12},type=fc,levtype=pl,step=0,levelist=500");
    for param in ["t", "T", "130.128", "u/v/r", "131/130"] {
        c.list(format!("{pl},param={param}"));
    }
    c.list(format!("{WAVE},type=fc,levtype=sfc,param=swh/mwd"));
    c.retrieve(format!("{sfc},param=mx2t/tp/10fg"));
}

/// Optional keywords with defaults (`timespan?none`, `domain?g`).
fn optional_keywords(c: &mut Cases) {
    let pl = format!("{OPER_12},type=fc,levtype=pl,step=0,levelist=500");
    c.list(format!("{pl},timespan=none"));
    c.list(format!("{pl},param=130"));
    c.list(format!("{OPER_12},domain=g,type=fc,levtype=pl,step=0,levelist=500,param=130"));
    c.add(Op::List { depth: 2 }, OPER_00, None);
    c.add(Op::Axes, format!("{OPER_12},type=fc,levtype=pl"), None);
}

/// Ranges without `by`, in reverse, over levels and members; `off`.
fn ranges(c: &mut Cases) {
    let pl = format!("{OPER_12},type=fc,levtype=pl,param=130,step=0");
    for levels in ["1000/to/500", "500/to/1000", "850/to/1000", "1000/to/500/by/-150", "1000/to/500/by/150", "50/to/250/by/100"] {
        c.list(format!("{pl},levelist={levels}"));
    }
    let ml = format!("{OPER_00},type=fc,levtype=ml,step=0,param=130");
    for levels in ["1/to/10", "10/to/1/by/3", "137/to/1/by/17", "1/to/137/by/68", "100.0/to/102"] {
        c.list(format!("{ml},levelist={levels}"));
    }
    let members = format!("{ENFO},type=pf,levtype=sfc,step=6,param=167");
    for numbers in ["1/to/50/by/7", "50/to/45", "0/to/3", "49/to/51"] {
        c.list(format!("{members},number={numbers}"));
    }
    c.list(format!("{OPER_00},type=fc,levtype=sfc,levelist=off,step=6"));
    c.list("class=od,expver=0001,stream=oper,date=20231203/to/20231201,time=0/to/12,type=fc,levtype=sfc,step=0".to_string());
    c.list("class=od,expver=0001,stream=oper,date=20231201,time=0/to/18,type=fc,levtype=pl,step=0,levelist=50".to_string());
}

/// Retrieve returns messages in the order the request names values, nested as the schema
/// nests its keywords.
fn retrieve_order(c: &mut Cases) {
    let pl = format!("{OPER_12},domain=g,type=fc,levtype=pl");
    for (levels, steps, params) in [
        ("500/1000", "12/0", "157/130"),
        ("1000/500", "0/12", "130/157"),
        ("850/to/1000/by/150", "0", "130"),
        ("1000/to/850/by/150", "0", "130"),
        ("850/1000/500", "0", "130"),
        ("50/250/1000", "24/6/48", "131/157/130"),
    ] {
        c.retrieve(format!("{pl},levelist={levels},step={steps},param={params}"));
    }
    let sfc = format!("{OPER_12},domain=g,type=fc,levtype=sfc");
    c.retrieve(format!("{sfc},param=167/151,step=0"));
    c.retrieve(format!("{sfc},param=151/167,step=24/0/12"));
    c.retrieve(format!("{sfc},param=167/167,step=0/0/6"));
    c.retrieve(format!("{ENFO},type=pf,levtype=sfc,param=167,step=6/0,number=3/1/2/50"));
    c.retrieve(format!("{ENFO},type=pf,levtype=pl,param=130,step=12,number=2/1,levelist=500/850"));
    c.retrieve(
        "class=od,expver=0001,stream=oper,date=20231202/20231201,time=1200/0000,domain=g,type=fc,levtype=pl,step=0,levelist=500,param=130"
            .to_string(),
    );
    c.retrieve(format!("{OPER_00},domain=g,type=fc,levtype=ml,step=0,param=133/130,levelist=137/to/1/by/34"));
    c.retrieve(format!("{OPER_00},domain=g,type=an,levtype=pt,step=0,param=60/131,levelist=350/320"));
    c.retrieve(format!("{OPER_00},domain=g,type=an,levtype=pv,step=0,param=54/3,levelist=2000"));
    c.retrieve("class=od,expver=0001,stream=oper,date=20231203,time=0000,domain=g,type=fc,levtype=sfc,step=12/0/6,param=167");
    c.retrieve("class=od,expver=0001,stream=scda,date=20231201,time=0600,domain=g,type=fc,levtype=sfc,step=12/to/0/by/3,param=167");
    c.retrieve(
        "class=od,expver=0001,stream=waef,date=20231201,time=0000,domain=g,type=pf,levtype=sfc,step=6,number=9/to/1/by/4,param=140229",
    );
    c.retrieve("class=od,expver=0001,stream=mmsf,date=20231101,time=0000,domain=g,type=fc,levtype=sfc,origin=ecmf,system=5,method=1,step=1464/744,number=4/0,param=167");
    // Keywords left out: FDB5 retrieves nothing, fieldstore every stored value.
    c.add(Op::Retrieve, format!("{sfc},param=167"), Some("keyword-left-out"));
    c.add(
        Op::Retrieve,
        "class=od,expver=0001,stream=enfo,date=20231201,time=0000,type=cf,levtype=sfc,step=0,param=167",
        Some("keyword-left-out"),
    );
}

/// Values MARS' language does not know, and keywords a data set's rule does not use.
fn unknown_values(c: &mut Cases) {
    c.add(Op::List { depth: 3 }, "class=od,expver=0001,stream=xxxx", Some("unknown-values"));
    c.add(
        Op::List { depth: 3 },
        "class=od,expver=0001,stream=oper,date=20231201,time=0000,type=fc,levtype=sfc,number=1",
        Some("context-refusals"),
    );
    c.list("class=od,expver=0001,stream=enfo,date=20231201,time=0000,type=pf,levtype=sfc,step=6,number=99");
    c.list("class=od,expver=0001,stream=oper,date=20231201,time=0000,type=fc,levtype=sfc,step=999");
    c.add(Op::List { depth: 3 }, "class=od/rd,expver=0001,stream=scda", Some("several-values"));
    c.add(Op::List { depth: 3 }, "class=od,expver=0001,stream=scda,param=all", Some("all"));
}

/// Every data set at each depth, their axes, where and stats.
fn breadth(c: &mut Cases) {
    let datasets = [
        OPER_00,
        OPER_12,
        "class=od,expver=0001,stream=oper,date=20231202,time=0000",
        "class=od,expver=0001,stream=oper,date=20231203,time=0000",
        "class=od,expver=abcd,stream=oper,date=20231201,time=0000",
        "class=od,expver=0001,stream=scda,date=20231201,time=0600",
        "class=od,expver=0001,stream=enfo,date=20231201,time=0000",
        WAVE,
        "class=od,expver=0001,stream=waef,date=20231201,time=0000",
        "class=od,expver=0001,stream=mmsf,date=20231101,time=0000",
        "class=od,expver=0001,stream=mnth",
        "class=od,expver=0001,stream=moda,date=20231101",
    ];
    for dataset in datasets {
        for depth in 1..=3 {
            // FDB5 asserts listing data sets whose rule has no date or time.
            let asserts = depth == 1 && (dataset.contains("mnth") || dataset.contains("moda"));
            c.add(Op::List { depth }, dataset, asserts.then_some("depth-1-assertion"));
        }
        c.add(Op::Axes, dataset, None);
        c.add(Op::Where, dataset, None);
        c.add(Op::Stats, dataset, None);
    }
    c.add(Op::List { depth: 3 }, "class=od,expver=0001", None);
    c.add(Op::List { depth: 2 }, "class=od", None);
    for step in ["0", "6", "12", "24", "48"] {
        c.list(format!("class=od,expver=0001,step={step}"));
    }
    for levtype in ["sfc", "pl", "ml", "pt", "pv"] {
        c.list(format!("class=od,expver=0001,levtype={levtype}"));
    }
}

/// Wipe and purge on copies of the stores: dry runs and `--doit`.
fn removals(c: &mut Cases) {
    let scda = "class=od,expver=0001,stream=scda,date=20231201,time=0600";
    for doit in [false, true] {
        c.add(Op::Wipe { doit }, scda, None);
        c.add(Op::Wipe { doit }, format!("{OPER_00},type=an,levtype=pv"), None);
        c.add(Op::Wipe { doit }, format!("{OPER_00},type=fc,levtype=ml"), None);
        c.add(Op::Purge { doit }, OPER_00, None);
        c.add(Op::Purge { doit }, OPER_12, None);
    }
}

#[cfg(test)]
mod tests {
    #[test]
    fn at_least_two_hundred_requests() {
        let all = super::all();
        assert!(all.len() >= 200, "{} cases", all.len());
    }
}
