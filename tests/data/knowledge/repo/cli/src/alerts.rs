/// How worried a gardener should be about tonight.
#[derive(Debug, PartialEq, Eq, Clone, Copy)]
pub enum FrostLevel {
    None,
    GroundFrost,
    HardFrost,
}

/// Ground frost is likely below 3 °C air temperature with humid air, because the ground
/// cools faster than the air two metres up where the sensor hangs. Below -2 °C plants that
/// are not hardy freeze.
pub fn frost_level(temperature_c: f64, humidity: f64) -> FrostLevel {
    if temperature_c <= -2.0 {
        FrostLevel::HardFrost
    } else if temperature_c <= 3.0 && humidity >= 70.0 {
        FrostLevel::GroundFrost
    } else {
        FrostLevel::None
    }
}

pub fn describe(level: FrostLevel) -> &'static str {
    match level {
        FrostLevel::None => "no frost expected",
        FrostLevel::GroundFrost => "ground frost likely: cover the seedlings",
        FrostLevel::HardFrost => "hard frost: bring tender plants inside",
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn dry_cold_air_is_not_ground_frost() {
        assert_eq!(frost_level(2.0, 40.0), FrostLevel::None);
        assert_eq!(frost_level(2.0, 85.0), FrostLevel::GroundFrost);
        assert_eq!(frost_level(-5.0, 10.0), FrostLevel::HardFrost);
    }
}
