// How every suite and bench launches Chromium (TOOLCHAIN.md § Browsers): Debian's system build,
// never a downloaded one, headless and quiet on the network.
export const LAUNCH = {
  executablePath: '/usr/bin/chromium',
  args: [
    '--headless',
    '--no-sandbox',
    '--disable-gpu',
    '--no-first-run',
    '--disable-background-networking',
    '--disable-component-update',
    '--disable-sync',
  ],
};

// WebRTC between pages on loopback (TOOLCHAIN.md § WebRTC): only ever inside `unshare -n`.
export const LAUNCH_WEBRTC = {
  ...LAUNCH,
  args: [
    ...LAUNCH.args,
    '--allow-loopback-in-peer-connection',
    '--disable-features=WebRtcHideLocalIpsWithMdns',
  ],
};
