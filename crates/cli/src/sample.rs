//! `fieldstore sample`: GRIB fields made from ecCodes' samples with ECMWF MARS keys, for
//! trying fieldstore out and for the test corpus.

use std::io::Write;
use std::path::PathBuf;

use anyhow::Context;
use clap::Args;

#[derive(Args)]
pub struct SampleArgs {
    /// Output GRIB file
    #[arg(short, long)]
    output: PathBuf,
    /// ecCodes sample: GRIB1, GRIB2, reduced_gg_ml_grib2, ...
    #[arg(long, default_value = "GRIB2")]
    template: String,
    #[arg(long, default_value = "od")]
    class: String,
    #[arg(long, default_value = "0001")]
    expver: String,
    #[arg(long, default_value = "oper")]
    stream: String,
    #[arg(long = "type", default_value = "fc")]
    kind: String,
    #[arg(long, default_value = "20231201")]
    date: String,
    #[arg(long, default_value = "1200")]
    time: String,
    /// sfc, pl, ml, pv, pt, sol, ...
    #[arg(long, default_value = "pl")]
    levtype: String,
    /// Steps, as a request names them: 0/6/12 or 0/to/48/by/6
    #[arg(long, default_value = "0")]
    steps: String,
    /// Levels, as a request names them (ignored for sfc)
    #[arg(long, default_value = "500")]
    levels: String,
    /// Parameter ids or names, as a request names them
    #[arg(long, default_value = "130")]
    params: String,
    /// Ensemble numbers, as a request names them: 1/2/3 or 1/to/50 (ensemble streams)
    #[arg(long)]
    numbers: Option<String>,
    /// Fill each field with varying values packed at this many bits per value (samples are
    /// constant fields, which pack to a few bytes)
    #[arg(long, value_name = "BITS")]
    fill_bits: Option<i64>,
}

pub fn run(a: &SampleArgs) -> anyhow::Result<()> {
    use fieldstore::types::KeywordType;
    fieldstore::grib::install_param_resolver();
    let levels = if a.levtype == "sfc" { vec![String::new()] } else { values("levels", "levelist", &a.levels, KeywordType::Double)? };
    let numbers = a
        .numbers
        .as_deref()
        .map(|n| values("numbers", "number", n, KeywordType::Integer))
        .transpose()?
        .unwrap_or_else(|| vec![String::new()]);
    let (steps, params) =
        (values("steps", "step", &a.steps, KeywordType::Step)?, values("params", "param", &a.params, KeywordType::Param)?);
    let grib2 = !a.template.to_ascii_lowercase().contains("grib1");
    // `--time 12` is 12:00, as `time=12` in a request (ecCodes would read 12 as 00:12).
    let time = fieldstore::types::KeywordType::Time.canonical("time", &a.time)?.parse::<u32>()?.to_string();
    let mut out = std::io::BufWriter::new(std::fs::File::create(&a.output).with_context(|| format!("creating {}", a.output.display()))?);
    let mut count = 0;
    for number in &numbers {
        for step in &steps {
            for level in &levels {
                for param in &params {
                    let mut keys: Vec<(&str, &str)> = vec![
                        ("centre", "98"),
                        ("setLocalDefinition", "1"),
                        ("localDefinitionNumber", "1"),
                        ("class", &a.class),
                        ("stream", &a.stream),
                        ("type", &a.kind),
                        ("expver", &a.expver),
                        ("date", &a.date),
                        ("time", &time),
                        ("step", step),
                        ("levtype", &a.levtype),
                    ];
                    if !level.is_empty() {
                        keys.push(("level", level));
                    }
                    keys.push(("paramId", param));
                    if !number.is_empty() {
                        if grib2 {
                            keys.push(("productDefinitionTemplateNumber", "1"));
                        }
                        keys.push(("number", number));
                    }
                    let message = fieldstore::grib::sample_message(&a.template, &keys)?;
                    let message = match a.fill_bits {
                        Some(bits) => fieldstore::grib::fill_values(&message, bits)?,
                        None => message,
                    };
                    out.write_all(&message)?;
                    count += 1;
                }
            }
        }
    }
    out.flush()?;
    note!("wrote {count} GRIB fields to {}", a.output.display());
    Ok(())
}

/// The values of an option written as a request writes a keyword's values (`1/2`,
/// `0/to/48/by/6`), each checked as the keyword's type reads it: the error names the option.
fn values(option: &str, keyword: &str, text: &str, ty: fieldstore::types::KeywordType) -> anyhow::Result<Vec<String>> {
    let request = fieldstore::Request::parse(&format!("{keyword}={text}")).with_context(|| format!("--{option} {text}"))?;
    let values = request.values(keyword, ty).with_context(|| format!("--{option} {text}"))?;
    values.filter(|v| !v.is_empty()).with_context(|| format!("--{option} {text}: name values, e.g. 1/2/3 or 1/to/10"))
}
