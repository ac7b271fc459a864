// libmime (the MIME codec mailparser and nodemailer are built on) ships no types; this is the one
// function Mailroom calls.
declare module "libmime" {
  const libmime: {
    /** Decodes the RFC 2047 encoded words in a header value (`=?UTF-8?Q?…?=`) to text. */
    decodeWords(value: string): string;
  };
  export default libmime;
}
