mod alerts;

use serde::Deserialize;
use std::env;
use std::process::ExitCode;

#[derive(Deserialize)]
struct Reading {
    temperature_c: f64,
    humidity: f64,
    pressure_hpa: f64,
}

fn station_url() -> String {
    env::var("TIDEPOOL_URL").unwrap_or_else(|_| "http://tidepool.local:8080".to_string())
}

fn latest(url: &str) -> Result<Reading, String> {
    ureq::get(&format!("{url}/api/latest"))
        .call()
        .map_err(|e| format!("cannot reach the station at {url}: {e}"))?
        .into_json()
        .map_err(|e| format!("unexpected answer: {e}"))
}

fn main() -> ExitCode {
    let command = env::args().nth(1).unwrap_or_else(|| "now".into());
    let url = station_url();
    match (command.as_str(), latest(&url)) {
        ("now", Ok(r)) => {
            println!("{:.1} °C, {:.0} % humidity, {:.1} hPa", r.temperature_c, r.humidity, r.pressure_hpa);
            ExitCode::SUCCESS
        }
        ("alert", Ok(r)) => {
            let level = alerts::frost_level(r.temperature_c, r.humidity);
            println!("{}", alerts::describe(level));
            if level == alerts::FrostLevel::None { ExitCode::SUCCESS } else { ExitCode::from(3) }
        }
        (_, Err(message)) => {
            eprintln!("tidectl: {message}");
            ExitCode::FAILURE
        }
        (other, _) => {
            eprintln!("tidectl: unknown command {other} (try now or alert)");
            ExitCode::from(2)
        }
    }
}
