{
  labels(app):: { 'app.kubernetes.io/instance': app },
}
