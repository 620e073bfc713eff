/**
 * Who made a request, as the API server's authenticator describes a user (authentication/v1
 * UserInfo): what CertificateRequests and CertificateSigningRequests record of their
 * requester, and what a SubjectAccessReview asks about.
 */
export interface UserInfo {
  username: string;
  uid?: string;
  groups?: string[];
  extra?: Record<string, string[]>;
}
