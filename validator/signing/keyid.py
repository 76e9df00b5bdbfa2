"""The profile's ``keyId``: ``SN=<serial in hex>,CA=<issuer distinguished name>``, matched against a certificate.

Writers differ, so nothing is compared as text: the serial is compared as an integer (upper/lower hex, leading
zeros), the issuer attribute by attribute (RFC 4514/2253 order or reversed, ``%20`` or literal spaces, attribute
types by name in any case or as dotted OIDs, ``#hex`` DER-encoded values, backslash escapes, quoted values).
Values are compared with the X.520 caseIgnoreMatch idea: surrounding whitespace dropped, inner runs of
whitespace collapsed, case folded.
"""
from __future__ import annotations

import re
from dataclasses import dataclass
from functools import lru_cache

from cryptography import x509


class KeyIdError(ValueError):
    """The keyId (or the DN inside it) cannot be parsed."""


# Attribute type names (lower case) -> OID. Includes the short forms Java and OpenSSL print.
ATTRIBUTE_OIDS = {
    "cn": "2.5.4.3", "commonname": "2.5.4.3",
    "sn": "2.5.4.4", "surname": "2.5.4.4",
    "serialnumber": "2.5.4.5",
    "c": "2.5.4.6", "countryname": "2.5.4.6",
    "l": "2.5.4.7", "localityname": "2.5.4.7",
    "st": "2.5.4.8", "s": "2.5.4.8", "stateorprovincename": "2.5.4.8",
    "street": "2.5.4.9", "streetaddress": "2.5.4.9",
    "o": "2.5.4.10", "organizationname": "2.5.4.10",
    "ou": "2.5.4.11", "organizationalunitname": "2.5.4.11",
    "t": "2.5.4.12", "title": "2.5.4.12",
    "businesscategory": "2.5.4.15",
    "postalcode": "2.5.4.17",
    "name": "2.5.4.41",
    "givenname": "2.5.4.42", "g": "2.5.4.42", "gn": "2.5.4.42",
    "initials": "2.5.4.43",
    "generationqualifier": "2.5.4.44",
    "x500uniqueidentifier": "2.5.4.45",
    "dnqualifier": "2.5.4.46",
    "pseudonym": "2.5.4.65",
    "organizationidentifier": "2.5.4.97",
    "dc": "0.9.2342.19200300.100.1.25", "domaincomponent": "0.9.2342.19200300.100.1.25",
    "uid": "0.9.2342.19200300.100.1.1", "userid": "0.9.2342.19200300.100.1.1",
    "e": "1.2.840.113549.1.9.1", "emailaddress": "1.2.840.113549.1.9.1",
    "jurisdictionc": "1.3.6.1.4.1.311.60.2.1.3", "jurisdictioncountryname": "1.3.6.1.4.1.311.60.2.1.3",
    "jurisdictionst": "1.3.6.1.4.1.311.60.2.1.2", "jurisdictionl": "1.3.6.1.4.1.311.60.2.1.1",
}
_OID_RE = re.compile(r"(?:oid\.)?([0-2](?:\.(?:0|[1-9][0-9]*))+)\Z", re.I)
_KEYID_RE = re.compile(r"[ \t]*SN[ \t]*=[ \t]*([0-9A-Fa-f]+)[ \t]*,[ \t]*CA[ \t]*=(.*)\Z", re.I | re.S)
_HEX = set("0123456789abcdefABCDEF")
# DER universal string types -> Python codec.
_DER_STRINGS = {0x0C: "utf-8", 0x13: "ascii", 0x16: "ascii", 0x12: "ascii", 0x1A: "ascii",
                0x14: "iso-8859-1", 0x1E: "utf-16-be", 0x1C: "utf-32-be"}

RDN = frozenset  # of (oid, normalised value)


@dataclass(frozen=True)
class KeyId:
    serial: int
    issuer: tuple[RDN, ...]   # in the order written
    issuer_text: str


def normalise_value(value: str) -> str:
    return " ".join(value.split()).casefold()


def attribute_oid(name: str) -> str:
    name = name.strip(" ")
    m = _OID_RE.match(name)
    if m:
        return m.group(1)
    oid = ATTRIBUTE_OIDS.get(name.lower())
    if oid is None:
        raise KeyIdError(f"unknown attribute type {name!r} in the issuer DN")
    return oid


def _decode_der_string(hexstr: str) -> str:
    if len(hexstr) % 2 or not hexstr or not set(hexstr) <= _HEX:
        raise KeyIdError(f"#{hexstr[:40]} is not an even-length hex string")
    der = bytes.fromhex(hexstr)
    if len(der) < 2:
        raise KeyIdError("#hex attribute value is too short to be DER")
    tag, length, pos = der[0], der[1], 2
    if length & 0x80:
        count = length & 0x7F
        if count == 0 or count > 4 or len(der) < 2 + count:
            raise KeyIdError("#hex attribute value has a bad DER length")
        length = int.from_bytes(der[2:2 + count], "big")
        pos = 2 + count
    if pos + length != len(der):
        raise KeyIdError("#hex attribute value DER length does not match its size")
    codec = _DER_STRINGS.get(tag)
    if codec is None:
        raise KeyIdError(f"#hex attribute value has DER tag 0x{tag:02x}, not a string type")
    try:
        return der[pos:].decode(codec)
    except UnicodeDecodeError:
        raise KeyIdError("#hex attribute value is not valid in its DER string type") from None


def parse_dn(text: str) -> tuple[RDN, ...]:
    """Parse an RFC 4514 (RFC 2253) string DN into RDNs of (oid, normalised value), in written order.

    ``%20`` is read as a space. Separators ``,`` (and the legacy ``;``) end an RDN, ``+`` joins multi-valued RDNs.
    """
    text = text.replace("%20", " ")
    if not text.strip(" "):
        raise KeyIdError("the issuer DN is empty")
    if not text.isascii():
        try:
            text.encode("utf-8")
        except UnicodeEncodeError as exc:
            raise KeyIdError(f"the issuer DN holds an unpaired surrogate U+{ord(text[exc.start]):04X}, which no "
                             f"certificate name can hold") from None
    rdns: list[RDN] = []
    current: list[tuple[str, str]] = []
    i, n = 0, len(text)
    while True:
        eq = text.find("=", i)
        if eq < 0:
            raise KeyIdError(f"issuer DN component {text[i:i + 40]!r} has no '='")
        oid = attribute_oid(text[i:eq])
        i = eq + 1
        while i < n and text[i] == " ":
            i += 1
        if i < n and text[i] == "#":
            j = i + 1
            while j < n and text[j] not in ",;+":
                j += 1
            value = _decode_der_string(text[i + 1:j].strip(" "))
            i = j
        else:
            buf = bytearray()
            quoted = i < n and text[i] == '"'
            if quoted:
                i += 1
            while i < n:
                ch = text[i]
                if ch == "\\":
                    nxt = text[i + 1:i + 3]
                    if len(nxt) == 2 and set(nxt) <= _HEX:
                        buf.append(int(nxt, 16))
                        i += 3
                        continue
                    if i + 1 >= n:
                        raise KeyIdError("issuer DN ends with a lone backslash")
                    buf += text[i + 1].encode("utf-8")
                    i += 2
                    continue
                if quoted and ch == '"':
                    quoted = False
                    i += 1
                    while i < n and text[i] == " ":
                        i += 1
                    if i < n and text[i] not in ",;+":
                        raise KeyIdError("text after a quoted issuer DN value")
                    break
                if not quoted and ch in ",;+":
                    break
                buf += ch.encode("utf-8")
                i += 1
            if quoted:
                raise KeyIdError("unterminated quoted value in the issuer DN")
            try:
                value = buf.decode("utf-8")
            except UnicodeDecodeError:
                raise KeyIdError("escaped bytes in the issuer DN are not UTF-8") from None
        current.append((oid, normalise_value(value)))
        if i >= n:
            rdns.append(frozenset(current))
            break
        sep = text[i]
        i += 1
        if sep != "+":
            rdns.append(frozenset(current))
            current = []
        if i >= n:
            raise KeyIdError("the issuer DN ends with a separator")
    return tuple(rdns)


@lru_cache(maxsize=256)
def parse_key_id(key_id: str) -> KeyId:
    """Parse a keyId (results cached: the same TPP sends the same keyId on every request)."""
    m = _KEYID_RE.match(key_id)
    if not m:
        raise KeyIdError("keyId is not of the form SN=<hex serial>,CA=<issuer DN>")
    return KeyId(int(m.group(1), 16), parse_dn(m.group(2)), m.group(2))


@lru_cache(maxsize=256)
def name_rdns(name: x509.Name) -> tuple[RDN, ...]:
    """A certificate Name as RDNs of (oid, normalised value), in DER order (most significant first)."""
    out = []
    for rdn in name.rdns:
        items = []
        for attr in rdn:
            value = attr.value
            if isinstance(value, bytes):
                value = value.hex()
            items.append((attr.oid.dotted_string, normalise_value(value)))
        out.append(frozenset(items))
    return tuple(out)


def issuer_matches(key_id: KeyId, cert: x509.Certificate) -> bool:
    return issuer_rdns_match(key_id, name_rdns(cert.issuer))


def issuer_rdns_match(key_id: KeyId, cert_rdns: tuple[RDN, ...]) -> bool:
    """:func:`issuer_matches` for a certificate issuer already read as RDNs (:func:`name_rdns`)."""
    return key_id.issuer == cert_rdns or key_id.issuer == tuple(reversed(cert_rdns))


def format_key_id(cert: x509.Certificate) -> str:
    """``SN=<upper-case hex, no leading zeros>,CA=<issuer RFC 4514 string>``."""
    return f"SN={cert.serial_number:X},CA={cert.issuer.rfc4514_string()}"
