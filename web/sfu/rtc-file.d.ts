// Types of web/sfu/rtc-file.js: the relay's --rtc-file.

export declare const MAX_RTC_FILE_BYTES: number;

export interface RtcConfig {
  appId: string;
  appSecret: string;
  turnKeyId?: string;
  turnKeyApiToken?: string;
  /** The API's origin, without /v1: https://rtc.live.cloudflare.com unless the file names another. */
  baseUrl: string;
}

export declare function parseRtcFile(
  text: string,
  options?: { source?: string },
): { ok: true; rtc: RtcConfig } | { ok: false; error: string };
