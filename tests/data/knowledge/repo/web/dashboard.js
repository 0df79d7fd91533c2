import { formatTemperature } from "./units.js";

const REFRESH_INTERVAL_MS = 60 * 1000;

async function fetchLatestReadings(hours) {
  const response = await fetch(`/api/readings?hours=${hours}`);
  if (!response.ok) throw new Error(`station answered ${response.status}`);
  return response.json();
}

function drawTemperatureChart(canvas, readings) {
  const context = canvas.getContext("2d");
  context.clearRect(0, 0, canvas.width, canvas.height);
  const temperatures = readings.map((r) => r.temperature_c);
  const low = Math.min(...temperatures) - 1;
  const high = Math.max(...temperatures) + 1;
  context.beginPath();
  readings.forEach((reading, i) => {
    const x = (i / (readings.length - 1)) * canvas.width;
    const y = canvas.height - ((reading.temperature_c - low) / (high - low)) * canvas.height;
    if (i === 0) context.moveTo(x, y);
    else context.lineTo(x, y);
  });
  context.stroke();
}

async function refresh() {
  const useFahrenheit = document.getElementById("fahrenheit").checked;
  try {
    const readings = await fetchLatestReadings(24);
    const latest = readings[readings.length - 1];
    const now = document.getElementById("now");
    now.textContent = formatTemperature(latest.temperature_c, useFahrenheit);
    now.classList.toggle("frost", latest.temperature_c <= 0);
    drawTemperatureChart(document.getElementById("chart"), readings);
  } catch (error) {
    document.getElementById("now").textContent = `offline (${error.message})`;
  }
}

refresh();
setInterval(refresh, REFRESH_INTERVAL_MS);
