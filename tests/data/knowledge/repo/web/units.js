// Unit conversions for the dashboard. The station stores SI-ish units (degrees Celsius,
// hectopascals, millimetres); visitors from the US prefer Fahrenheit and inches.

export function celsiusToFahrenheit(celsius) {
  return celsius * 9 / 5 + 32;
}

export function hectopascalToInchesOfMercury(hpa) {
  return hpa * 0.0295299830714;
}

export function millimetresToInches(mm) {
  return mm / 25.4;
}

export function formatTemperature(celsius, useFahrenheit) {
  const value = useFahrenheit ? celsiusToFahrenheit(celsius) : celsius;
  return `${value.toFixed(1)} °${useFahrenheit ? "F" : "C"}`;
}
