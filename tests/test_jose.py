"""mcplite.jose: base64url, ES256 (P-256, RFC 6979) and RS256, key loading, compact JWTs.

Known-answer vectors come from RFC 6979 A.2.5, RFC 7515 A.2/A.3 and RFC 7517; the PEM fixtures and the
signatures over b"hello openssl" were made with OpenSSL 3.0, an independent implementation.
"""

import json

import pytest

from mcplite import jose
from support.keys import EC_PKCS8_PEM, RFC7515_RSA_JWK

# --- vectors ------------------------------------------------------------------------------------------

# RFC 6979 A.2.5: P-256 key and the SHA-256 signatures of "sample" and "test".
RFC6979_D = 0xC9AFA9D845BA75166B5C215767B1D6934E50C3DB36E89B127B8A622B120F6721
RFC6979_UX = 0x60FED4BA255A9D31C961EB74C6356D68C049B8923B61FA6CE669622E60F29FB6
RFC6979_UY = 0x7903FE1008B8BC99A41AE9E95628BC64F2F1B20C2D7E9F5177A3C294D4462299
RFC6979_SIGNATURES = {
    b"sample": (
        "EFD48B2AACB6A8FD1140DD9CD45E81D69D2C877B56AAF991C34D0EA84EAF3716"
        "F7CB1C942D657C41D436C7A1B6E29F65F3E900DBB9AFF4064DC4AB2F843ACDA8"
    ),
    b"test": (
        "F1ABB023518351CD71D881567B1EA663ED3EFCF6C5132B354F28D3B0B7D38367"
        "019F4113742A2B14BD25926B49C649155F267E60D3814B4C0CC84250E46F0083"
    ),
}

# RFC 7515 A.1-A.4 share this payload; the signing input of A.2 and A.3 differ only in the header.
RFC7515_PAYLOAD = "eyJpc3MiOiJqb2UiLA0KICJleHAiOjEzMDA4MTkzODAsDQogImh0dHA6Ly9leGFtcGxlLmNvbS9pc19yb290Ijp0cnVlfQ"
RFC7515_NOW = 1300819000  # before the payload's exp (1300819380)

# RFC 7515 A.2: RS256 with the RSA key of RFC 7517 A.2 (RFC7515_RSA_JWK, in support.keys). PKCS#1 v1.5 is
# deterministic: the signature must come out exactly.
RFC7515_A2_TOKEN = (
    "eyJhbGciOiJSUzI1NiJ9." + RFC7515_PAYLOAD + ".cC4hiUPoj9Eetdgtv3hF80EGrhuB__dzERat0XF9g2VtQgr9PJbu3XOiZj5RZmh7"
    "AAuHIm4Bh-0Qc_lF5YKt_O8W2Fp5jujGbds9uJdbF9CUAr7t1dnZcAcQjbKBYNX4BAynRFdiuB--f_nZLgrnbyTyWzO75vRK5h6xBArLIAR"
    "NPvkSjtQBMHlb1L07Qe7K0GarZRmB_eSN9383LcOLn6_dO--xi12jzDwusC-eOkHWEsqtFZESc6BfI7noOPqvhJ1phCnvWh6IeYI2w9QOYEU"
    "ipUTI8np6LbgGY9Fs98rqVt5AXLIhWkWywlVmtVrBp0igcN_IoypGlUPQGe77Rw"
)

# RFC 7515 A.3: ES256. ECDSA signatures are randomized in the RFC, so this one can only be verified.
RFC7515_EC_JWK = {
    "kty": "EC", "crv": "P-256",
    "x": "f83OJ3D2xF1Bg8vub9tLe1gHMzV76e8Tus9uPHvRVEU",
    "y": "x_FEzRu9m36HLN_tue659LNpXW6pCyStikYjKIWI5a0",
    "d": "jpsQnnGQmL-YBIffH1136cspYG6-0iY7X1fCE9-E9LI",
}
RFC7515_A3_TOKEN = (
    "eyJhbGciOiJFUzI1NiJ9." + RFC7515_PAYLOAD
    + ".DtEhU3ljbEg8L38VWAfUAqOyKAM6-Xx-F4GawxaepmXFCgfTjDxw5djxLa8ISlSApmWQxfKTUJqPP3-Kg6NU1Q"
)

# OpenSSL-made keys, and OpenSSL's signatures over b"hello openssl" with them (ES256 as r || s).
OPENSSL_MESSAGE = b"hello openssl"
OPENSSL_EC_SIGNATURE = bytes.fromhex(
    "328764a765366eb1ffb0576e3edeab52cb9d0231aef7a69edac58d990b6369ef"
    "97aa4364691868f286cb245aaf3f907360a27b4f4a3226e1c5edd5ef839944eb"
)
OPENSSL_RSA_SIGNATURE = jose.b64url_decode(
    "NtHyQjRgyffRWBl2K4vKdgZWuYgIYp0hnsw5wABoLp5yLrNVFDAtf-ihFYetE85JwXnu5d66Grw9rC-8W4pLuMf9OO9ePLeJckGlZUDdpknB"
    "VfvJOzgNjQxOc_pJHJuuaauQnjOE3gWE1gkcDctXqp4F6OTaV19Rhvpr1jBJLkLp8-sZFLkrhj_ZQA4Z2JV-tqVhxkPfEpGwddMITtTQJGsa"
    "N9E6nY1322__AXPQrdkqIR0XAOu44zC0vF7qo2UfQwObmcik6Uslpy4cCUbUHbu2BOY6jfO1PFSn5C6rTV0o7eByv1xWRQeRCheGwwcglugr"
    "iTB3PL1FvmuwHofWYA"
)

# EC_PKCS8_PEM (in support.keys) is the same P-256 key as this one, in PKCS#8.
EC_SEC1_PEM = """\
-----BEGIN EC PRIVATE KEY-----
MHcCAQEEIM/Kcx3paVJjxNR+3xV67Mx26nogYeAqTivkZPKpWyPJoAoGCCqGSM49
AwEHoUQDQgAEMODkuwHMu5JqorVUIvXiyVLE2LBV/KGw4eePUuXAh9utmqxnRwNG
stTquBFhf/n/0SZM7UthoH9vPRs22zlnBQ==
-----END EC PRIVATE KEY-----
"""

EC_PUB_PEM = """\
-----BEGIN PUBLIC KEY-----
MFkwEwYHKoZIzj0CAQYIKoZIzj0DAQcDQgAEMODkuwHMu5JqorVUIvXiyVLE2LBV
/KGw4eePUuXAh9utmqxnRwNGstTquBFhf/n/0SZM7UthoH9vPRs22zlnBQ==
-----END PUBLIC KEY-----
"""

RSA_PKCS8_PEM = """\
-----BEGIN PRIVATE KEY-----
MIIEvgIBADANBgkqhkiG9w0BAQEFAASCBKgwggSkAgEAAoIBAQCC4lCWg9sGJx9f
xZj8i8t9W30aaco7GbxetG+H6Bfsu0xh1QkWzkjbOIXw5vFJrAx5zBjtENjTWVGV
Zp/9hoC09vFysHbVEkGL0jETqfdoqQo0iPSsk2PQYYcqnmen9/edbB2/7CSEfH8D
qWfeeb/enb3rfzV1M5CG36Qs6yqxcNJ47ewBe6PGSPIGRToHcpjKUPZU55aYyRaU
YC+vgQHYP7D5aGZhwWnBN0YhlQ+VbmlPdcJJVgEs6e4OJa6ulBQ0eMPLr3T0mxQ5
Nyhaxb/wxtpVMXEAp4YlvfXFe/Q/RlDDr+NGzAuFxGt88CwwyXMt5VgKpe/2cqor
52pRhOSTAgMBAAECggEAOAWNr/ctQyNwwuoNkx91EKmd0TXx2T0pSzIZQQdfYjVD
OubYNppCRg8aCaSYJ8wMJP/utV4OKNyk1nlwRrCRG6RNcaVFn+rqAmKMHhoUq4gb
NaRfchS+Vv2/wMa/oH47Tvbtfu4hLVIqfZM/wdLEBRHorkmrRIi3Nnu4Rn+8LOl8
gIKZvsB636KOn9FSUaN9W5P7t1AnUW7lwrfxjqPzBKcN2Y2088XDLS7/Csc6R3IJ
Pby7U86g9paOYIvUg+2ZH4FRDTTXPgWGtw5ZKs2TRyGLdYjvz/zJnJA1E06QVACX
Xa5FwDC0iox4NclGf4LwXXSHs8cO9hb5nqc1RMKTXQKBgQC4pUW/Syij5PaYpzpV
qRxanSg2yagD8+wfS9gxU2B/jKOW+KSoRcD3GCFiVMX8xnFaCpOYXBgAXWJx15WI
qFgLS+vib/q42DtTVEK7cyGiK2IgLAIWIG+PMvkcltO5LtvT11u2tJC3Y0L+oi8V
LufqnzGzaZD9N9UI5V4FyhI2XQKBgQC1dnzpAdl67QpJixE0wFWapU0A3/Gr5ky3
rZiWOwpUxzQYpZOOkTqPAa4Jo4d5byhGQqJV33sBAUChddPi4H4bakX+NvOkK3rU
EUZkzK0G9Dm7wwPWtU1moBtMYpVOe9p3UTiIKAAHpsPbKLRpQg0xlRYcqWEuQR1V
cPciaTb3rwKBgQCO9MaPWG1alwalIbP0Zj3hmhNsd6xxgwSpJlt3tQndNtHhLRiu
f3Lq2+/c5a10C1/vSokDSSn7/lEdur+3Uj74YAt9AR2oxyEHXxFbd8PufpA2QFxN
LUeyItDj5ZJ+qVzhIreLOTliAqP36TFywSIlcKNWOMFci0GQ5aRp7w0ysQKBgCcx
d1swThPR3NXzlnzJSfQD3fThaaZSMKG/eeSAzgNvnx3vrUYusfIvT7K/QkSFMLK0
M7HOehfGeHonI+Otzy8GriVxIwCDb50cOhMNbhXBbDLUtSCLujL/Q8YkyNDRyWba
ARbPZOpCJ61PRmAxpv3dkJASOW4vHDHXG1mwVfH7AoGBAJ3goUu/dCEXOfduEsqj
7AxfXAGUsYTt628ZAehWC78jEwGW5xJ2VoRLDIFtQYAIZPNx1eZBUQcXJqMvIbC6
u5J6nQjPdNnrHGMsDNK4MIJMS4IuLeeTQ/uE3zi5rY/7KvOgYL3iyz4oxObY9zMS
Ckoh1SA3RLft4mNHFDfN/rvj
-----END PRIVATE KEY-----
"""

RSA_PKCS1_PEM = """\
-----BEGIN RSA PRIVATE KEY-----
MIIEpAIBAAKCAQEAguJQloPbBicfX8WY/IvLfVt9GmnKOxm8XrRvh+gX7LtMYdUJ
Fs5I2ziF8ObxSawMecwY7RDY01lRlWaf/YaAtPbxcrB21RJBi9IxE6n3aKkKNIj0
rJNj0GGHKp5np/f3nWwdv+wkhHx/A6ln3nm/3p296381dTOQht+kLOsqsXDSeO3s
AXujxkjyBkU6B3KYylD2VOeWmMkWlGAvr4EB2D+w+WhmYcFpwTdGIZUPlW5pT3XC
SVYBLOnuDiWurpQUNHjDy6909JsUOTcoWsW/8MbaVTFxAKeGJb31xXv0P0ZQw6/j
RswLhcRrfPAsMMlzLeVYCqXv9nKqK+dqUYTkkwIDAQABAoIBADgFja/3LUMjcMLq
DZMfdRCpndE18dk9KUsyGUEHX2I1Qzrm2DaaQkYPGgmkmCfMDCT/7rVeDijcpNZ5
cEawkRukTXGlRZ/q6gJijB4aFKuIGzWkX3IUvlb9v8DGv6B+O0727X7uIS1SKn2T
P8HSxAUR6K5Jq0SItzZ7uEZ/vCzpfICCmb7Aet+ijp/RUlGjfVuT+7dQJ1Fu5cK3
8Y6j8wSnDdmNtPPFwy0u/wrHOkdyCT28u1POoPaWjmCL1IPtmR+BUQ001z4FhrcO
WSrNk0chi3WI78/8yZyQNRNOkFQAl12uRcAwtIqMeDXJRn+C8F10h7PHDvYW+Z6n
NUTCk10CgYEAuKVFv0soo+T2mKc6VakcWp0oNsmoA/PsH0vYMVNgf4yjlvikqEXA
9xghYlTF/MZxWgqTmFwYAF1icdeViKhYC0vr4m/6uNg7U1RCu3MhoitiICwCFiBv
jzL5HJbTuS7b09dbtrSQt2NC/qIvFS7n6p8xs2mQ/TfVCOVeBcoSNl0CgYEAtXZ8
6QHZeu0KSYsRNMBVmqVNAN/xq+ZMt62YljsKVMc0GKWTjpE6jwGuCaOHeW8oRkKi
Vd97AQFAoXXT4uB+G2pF/jbzpCt61BFGZMytBvQ5u8MD1rVNZqAbTGKVTnvad1E4
iCgAB6bD2yi0aUINMZUWHKlhLkEdVXD3Imk2968CgYEAjvTGj1htWpcGpSGz9GY9
4ZoTbHescYMEqSZbd7UJ3TbR4S0Yrn9y6tvv3OWtdAtf70qJA0kp+/5RHbq/t1I+
+GALfQEdqMchB18RW3fD7n6QNkBcTS1HsiLQ4+WSfqlc4SK3izk5YgKj9+kxcsEi
JXCjVjjBXItBkOWkae8NMrECgYAnMXdbME4T0dzV85Z8yUn0A9304WmmUjChv3nk
gM4Db58d761GLrHyL0+yv0JEhTCytDOxznoXxnh6JyPjrc8vBq4lcSMAg2+dHDoT
DW4VwWwy1LUgi7oy/0PGJMjQ0clm2gEWz2TqQietT0ZgMab93ZCQEjluLxwx1xtZ
sFXx+wKBgQCd4KFLv3QhFzn3bhLKo+wMX1wBlLGE7etvGQHoVgu/IxMBlucSdlaE
SwyBbUGACGTzcdXmQVEHFyajLyGwuruSep0Iz3TZ6xxjLAzSuDCCTEuCLi3nk0P7
hN84ua2P+yrzoGC94ss+KMTm2PczEgpKIdUgN0S37eJjRxQ3zf674w==
-----END RSA PRIVATE KEY-----
"""

RSA_PUB_PEM = """\
-----BEGIN PUBLIC KEY-----
MIIBIjANBgkqhkiG9w0BAQEFAAOCAQ8AMIIBCgKCAQEAguJQloPbBicfX8WY/IvL
fVt9GmnKOxm8XrRvh+gX7LtMYdUJFs5I2ziF8ObxSawMecwY7RDY01lRlWaf/YaA
tPbxcrB21RJBi9IxE6n3aKkKNIj0rJNj0GGHKp5np/f3nWwdv+wkhHx/A6ln3nm/
3p296381dTOQht+kLOsqsXDSeO3sAXujxkjyBkU6B3KYylD2VOeWmMkWlGAvr4EB
2D+w+WhmYcFpwTdGIZUPlW5pT3XCSVYBLOnuDiWurpQUNHjDy6909JsUOTcoWsW/
8MbaVTFxAKeGJb31xXv0P0ZQw6/jRswLhcRrfPAsMMlzLeVYCqXv9nKqK+dqUYTk
kwIDAQAB
-----END PUBLIC KEY-----
"""

RSA_PUB_PKCS1_PEM = """\
-----BEGIN RSA PUBLIC KEY-----
MIIBCgKCAQEAguJQloPbBicfX8WY/IvLfVt9GmnKOxm8XrRvh+gX7LtMYdUJFs5I
2ziF8ObxSawMecwY7RDY01lRlWaf/YaAtPbxcrB21RJBi9IxE6n3aKkKNIj0rJNj
0GGHKp5np/f3nWwdv+wkhHx/A6ln3nm/3p296381dTOQht+kLOsqsXDSeO3sAXuj
xkjyBkU6B3KYylD2VOeWmMkWlGAvr4EB2D+w+WhmYcFpwTdGIZUPlW5pT3XCSVYB
LOnuDiWurpQUNHjDy6909JsUOTcoWsW/8MbaVTFxAKeGJb31xXv0P0ZQw6/jRswL
hcRrfPAsMMlzLeVYCqXv9nKqK+dqUYTkkwIDAQAB
-----END RSA PUBLIC KEY-----
"""

# --- base64url ----------------------------------------------------------------------------------------


def test_b64url_round_trip_without_padding() -> None:
    for data in (b"", b"f", b"fo", b"foo", bytes(range(256))):
        encoded = jose.b64url_encode(data)
        assert "=" not in encoded and "+" not in encoded and "/" not in encoded
        assert jose.b64url_decode(encoded) == data


@pytest.mark.parametrize("text", ["a+b", "ab/c", "abc=", "a", "ab c"])
def test_b64url_rejects_other_alphabets_and_impossible_lengths(text: str) -> None:
    with pytest.raises(jose.JWTError):
        jose.b64url_decode(text)


# --- ES256 --------------------------------------------------------------------------------------------


def test_p256_public_key_derivation_matches_rfc6979() -> None:
    key = jose.ECPrivateKey(RFC6979_D)
    assert (key.public_key.x, key.public_key.y) == (RFC6979_UX, RFC6979_UY)


@pytest.mark.parametrize("message", sorted(RFC6979_SIGNATURES))
def test_es256_signature_is_the_rfc6979_deterministic_one(message: bytes) -> None:
    key = jose.ECPrivateKey(RFC6979_D)
    signature = key.sign(message)
    assert signature.hex().upper() == RFC6979_SIGNATURES[message]
    assert key.public_key.verify(message, signature)


def test_es256_verify_refuses_other_messages_and_damaged_signatures() -> None:
    public = jose.ECPublicKey(RFC6979_UX, RFC6979_UY)
    signature = bytes.fromhex(RFC6979_SIGNATURES[b"sample"])
    assert not public.verify(b"samplf", signature)
    assert not public.verify(b"sample", signature[:-1] + bytes([signature[-1] ^ 1]))
    assert not public.verify(b"sample", signature[:32])  # wrong length
    assert not public.verify(b"sample", bytes(64))  # r = s = 0 is out of range


def test_rfc7515_a3_es256_token_verifies() -> None:
    header, claims = jose.jwt_decode(RFC7515_A3_TOKEN, jose.load_public_key(RFC7515_EC_JWK), now=RFC7515_NOW)
    assert header == {"alg": "ES256"}
    assert claims == {"iss": "joe", "exp": 1300819380, "http://example.com/is_root": True}


def test_rfc7515_a3_private_jwk_signs_tokens_its_public_half_verifies() -> None:
    key = jose.load_private_key(RFC7515_EC_JWK)
    token = jose.jwt_encode({"iss": "joe"}, key)
    assert jose.jwt_decode(token, jose.load_public_key(RFC7515_EC_JWK))[1] == {"iss": "joe"}


def test_ec_jwk_whose_d_belongs_to_another_point_is_refused() -> None:
    mismatched = dict(RFC7515_EC_JWK, d=jose.b64url_encode(RFC6979_D.to_bytes(32, "big")))
    with pytest.raises(jose.JWTError, match="does not match"):
        jose.load_private_key(mismatched)


def test_point_off_the_curve_is_refused() -> None:
    with pytest.raises(jose.JWTError, match="not on P-256"):
        jose.ECPublicKey(RFC6979_UX, RFC6979_UY + 1)


def test_other_curves_are_refused() -> None:
    with pytest.raises(jose.JWTError, match="P-256"):
        jose.load_public_key(dict(RFC7515_EC_JWK, crv="P-384"))


def test_generated_keys_sign_and_verify() -> None:
    key = jose.ECPrivateKey.generate(kid="k1")
    token = jose.jwt_encode({"sub": "x"}, key)
    header, claims = jose.jwt_decode(token, key.public_key)
    assert header["kid"] == "k1" and claims == {"sub": "x"}
    assert jose.load_public_key(key.public_key.to_jwk()) == key.public_key


# --- RS256 --------------------------------------------------------------------------------------------


def test_rfc7515_a2_rs256_signature_is_reproduced_exactly() -> None:
    key = jose.load_private_key(RFC7515_RSA_JWK)
    signing_input, _, signature = RFC7515_A2_TOKEN.rpartition(".")
    assert jose.b64url_encode(key.sign(signing_input.encode())) == signature


def test_rs256_without_crt_parameters_gives_the_same_signature() -> None:
    without_primes = {k: v for k, v in RFC7515_RSA_JWK.items() if k not in ("p", "q")}
    signing_input, _, signature = RFC7515_A2_TOKEN.rpartition(".")
    assert jose.b64url_encode(jose.load_private_key(without_primes).sign(signing_input.encode())) == signature


def test_rfc7515_a2_token_verifies_and_a_changed_payload_does_not() -> None:
    public = jose.load_public_key(RFC7515_RSA_JWK)
    assert jose.jwt_decode(RFC7515_A2_TOKEN, public, now=RFC7515_NOW)[1]["iss"] == "joe"
    header, payload, signature = RFC7515_A2_TOKEN.split(".")
    forged = ".".join([header, jose.b64url_encode(b'{"iss":"eve"}'), signature])
    with pytest.raises(jose.JWTError, match="signature"):
        jose.jwt_decode(forged, public)


def test_rsa_primes_that_do_not_match_the_modulus_are_refused() -> None:
    with pytest.raises(jose.JWTError, match="primes"):
        jose.load_private_key(dict(RFC7515_RSA_JWK, q=RFC7515_RSA_JWK["p"]))


def test_short_rsa_keys_are_refused() -> None:
    with pytest.raises(jose.JWTError, match="2048"):
        jose.RSAPublicKey((1 << 1023) + 1, 65537)


# --- PEM ----------------------------------------------------------------------------------------------


def test_ec_pem_formats_load_to_the_same_key_and_verify_openssl_signatures() -> None:
    pkcs8 = jose.load_private_key(EC_PKCS8_PEM)
    sec1 = jose.load_private_key(EC_SEC1_PEM)
    public = jose.load_public_key(EC_PUB_PEM)
    assert isinstance(pkcs8, jose.ECPrivateKey)
    assert pkcs8.public_key == sec1.public_key == public
    assert public.verify(OPENSSL_MESSAGE, OPENSSL_EC_SIGNATURE)
    assert public.verify(b"ours", pkcs8.sign(b"ours"))


def test_rsa_pem_formats_load_to_the_same_key_and_match_openssl_signatures() -> None:
    pkcs8 = jose.load_private_key(RSA_PKCS8_PEM)
    pkcs1 = jose.load_private_key(RSA_PKCS1_PEM.encode())  # bytes are accepted too
    spki = jose.load_public_key(RSA_PUB_PEM)
    assert isinstance(pkcs8, jose.RSAPrivateKey)
    assert pkcs8.public_key == pkcs1.public_key == spki == jose.load_public_key(RSA_PUB_PKCS1_PEM)
    assert spki.verify(OPENSSL_MESSAGE, OPENSSL_RSA_SIGNATURE)
    assert pkcs1.sign(OPENSSL_MESSAGE) == OPENSSL_RSA_SIGNATURE  # deterministic, so identical to OpenSSL's


def test_encrypted_and_unknown_pem_are_refused() -> None:
    with pytest.raises(jose.JWTError, match="encrypted"):
        jose.load_private_key("-----BEGIN ENCRYPTED PRIVATE KEY-----\nAAAA\n-----END ENCRYPTED PRIVATE KEY-----\n")
    with pytest.raises(jose.JWTError, match="unsupported PEM label"):
        jose.load_private_key(EC_PUB_PEM)
    with pytest.raises(jose.JWTError):
        jose.load_private_key("-----BEGIN PRIVATE KEY-----\nMAA=\n-----END PRIVATE KEY-----\n")


def test_jwk_given_as_json_text_loads() -> None:
    assert jose.load_public_key(json.dumps(RFC7515_EC_JWK)) == jose.load_public_key(RFC7515_EC_JWK)


# --- JWT ----------------------------------------------------------------------------------------------


def test_jwt_header_takes_alg_from_the_key_and_extra_members() -> None:
    key = jose.load_private_key(EC_PKCS8_PEM)
    token = jose.jwt_encode({"a": 1}, key, headers={"typ": "oauth-id-jag+jwt", "alg": "none"})
    header, _ = jose.jwt_decode(token, key.public_key)
    assert header == {"typ": "oauth-id-jag+jwt", "alg": "ES256"}


def test_jwt_algorithm_must_match_the_key() -> None:
    # An RS256 token must not verify against an EC key, nor "none" against anything.
    with pytest.raises(jose.JWTError, match="algorithm"):
        jose.jwt_decode(RFC7515_A2_TOKEN, jose.load_public_key(RFC7515_EC_JWK))
    unsigned = jose.b64url_encode(b'{"alg":"none"}') + "." + RFC7515_PAYLOAD + "."
    with pytest.raises(jose.JWTError, match="algorithm"):
        jose.jwt_decode(unsigned, jose.load_public_key(RFC7515_EC_JWK))


def test_jwt_claim_checks() -> None:
    key = jose.load_private_key(EC_PKCS8_PEM)
    token = jose.jwt_encode({"iss": "a", "aud": ["x", "y"], "exp": 1000, "nbf": 900}, key)
    assert jose.jwt_decode(token, key.public_key, issuer="a", audience="y", now=950, leeway=0)
    for kwargs in ({"now": 1001}, {"now": 899}, {"now": 950, "issuer": "b"}, {"now": 950, "audience": "z"}):
        with pytest.raises(jose.JWTError):
            jose.jwt_decode(token, key.public_key, leeway=0, **kwargs)


def test_malformed_tokens_are_refused() -> None:
    public = jose.load_public_key(RFC7515_EC_JWK)
    for token in ("a.b", "a.b.c.d", "!!.e30.", jose.b64url_encode(b"[]") + ".e30."):
        with pytest.raises(jose.JWTError):
            jose.jwt_decode(token, public)


def test_private_key_repr_never_shows_the_private_part() -> None:
    ec = jose.load_private_key(RFC7515_EC_JWK)
    rsa = jose.load_private_key(RFC7515_RSA_JWK)
    for key, jwk in ((ec, RFC7515_EC_JWK), (rsa, RFC7515_RSA_JWK)):
        d = int.from_bytes(jose.b64url_decode(jwk["d"]), "big")
        assert jwk["d"] not in repr(key) and str(d) not in repr(key) and f"{d:x}" not in repr(key)
