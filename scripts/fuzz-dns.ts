/**
 * The fuzz server's resolver (scripts/fuzz.sh): the tests' DNS server on loopback with an empty
 * zone, so every lookup is a quick, real NXDOMAIN. verifyDomain then reports records `missing`
 * (as it would for a domain whose owner has not published them yet) instead of waiting on, or
 * reaching, a real resolver. Prints `ip:port` once listening; runs until killed.
 */
import { startDnsServer } from "../test/helpers/dns-server.js";

const dns = await startDnsServer();
console.log(dns.address);
const stop = () => void dns.close().then(() => process.exit(0));
process.on("SIGTERM", stop);
process.on("SIGINT", stop);
