"""transports.http_server"""
