//! TLS for PostgreSQL connections through rustls with the ring provider, so no OpenSSL is linked
//! and a static musl binary can reach a server. `sslmode=prefer` encrypts without checking the
//! server's certificate (libpq's behaviour: a man in the middle could refuse TLS anyway);
//! `require` and stronger verify the chain and the host name against `sslrootcert`, else the
//! webpki roots.
use std::sync::Arc;

use rustls::client::danger::{HandshakeSignatureValid, ServerCertVerified, ServerCertVerifier};
use rustls::crypto::{verify_tls12_signature, verify_tls13_signature, CryptoProvider};
use rustls::pki_types::pem::PemObject;
use rustls::pki_types::{CertificateDer, ServerName, UnixTime};
use rustls::{ClientConfig, DigitallySignedStruct, RootCertStore, SignatureScheme};

use crate::location::{PgUrl, TlsMode};

/// The rustls configuration `url` asks for; `None` for `sslmode=disable`.
pub fn client_config(url: &PgUrl) -> Result<Option<ClientConfig>, String> {
    let provider = Arc::new(rustls::crypto::ring::default_provider());
    let builder = ClientConfig::builder_with_provider(provider.clone())
        .with_safe_default_protocol_versions()
        .map_err(|e| e.to_string())?;
    Ok(match url.tls {
        TlsMode::Disable => None,
        TlsMode::Prefer => Some(
            builder
                .dangerous()
                .with_custom_certificate_verifier(Arc::new(Unchecked(provider)))
                .with_no_client_auth(),
        ),
        TlsMode::Verify => {
            let mut roots = RootCertStore::empty();
            match &url.root_cert {
                Some(path) => {
                    let certs = CertificateDer::pem_file_iter(path)
                        .and_then(|certs| certs.collect::<Result<Vec<_>, _>>())
                        .map_err(|e| format!("sslrootcert {}: {e}", path.display()))?;
                    if certs.is_empty() {
                        return Err(format!(
                            "sslrootcert {}: no PEM certificate in it",
                            path.display()
                        ));
                    }
                    for cert in certs {
                        roots
                            .add(cert)
                            .map_err(|e| format!("sslrootcert {}: {e}", path.display()))?;
                    }
                }
                None => roots.extend(webpki_roots::TLS_SERVER_ROOTS.iter().cloned()),
            }
            Some(builder.with_root_certificates(roots).with_no_client_auth())
        }
    })
}

/// Accepts any server certificate while still checking the handshake's signatures: encryption
/// without authentication, what libpq's `sslmode=prefer` gives.
#[derive(Debug)]
struct Unchecked(Arc<CryptoProvider>);

impl ServerCertVerifier for Unchecked {
    fn verify_server_cert(
        &self,
        _end_entity: &CertificateDer<'_>,
        _intermediates: &[CertificateDer<'_>],
        _server_name: &ServerName<'_>,
        _ocsp_response: &[u8],
        _now: UnixTime,
    ) -> Result<ServerCertVerified, rustls::Error> {
        Ok(ServerCertVerified::assertion())
    }

    fn verify_tls12_signature(
        &self,
        message: &[u8],
        cert: &CertificateDer<'_>,
        dss: &DigitallySignedStruct,
    ) -> Result<HandshakeSignatureValid, rustls::Error> {
        verify_tls12_signature(
            message,
            cert,
            dss,
            &self.0.signature_verification_algorithms,
        )
    }

    fn verify_tls13_signature(
        &self,
        message: &[u8],
        cert: &CertificateDer<'_>,
        dss: &DigitallySignedStruct,
    ) -> Result<HandshakeSignatureValid, rustls::Error> {
        verify_tls13_signature(
            message,
            cert,
            dss,
            &self.0.signature_verification_algorithms,
        )
    }

    fn supported_verify_schemes(&self) -> Vec<SignatureScheme> {
        self.0.signature_verification_algorithms.supported_schemes()
    }
}
