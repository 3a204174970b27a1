// Entry point of the cockpit bundle.
import { startCockpit } from './app.js';

const params = new URLSearchParams(location.search);
startCockpit({ token: params.get('token') }).then(
  (cockpit) => (window.tetherCockpit = cockpit),
  (e) => {
    document.querySelector('#panels').textContent = `The cockpit could not start: ${e.message}`;
    console.error(e);
  },
);
