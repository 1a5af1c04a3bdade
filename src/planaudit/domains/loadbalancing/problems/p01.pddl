;; Warm-up: one bucket, one switched-off server.
(define (problem loadbalancing-p01)
  (:domain loadbalancing)
  (:objects
    eu - region
    web - service
    s1 - server
    b1 - bucket)
  (:init
    (in-region s1 eu) (supports s1 web)
    (allowed b1 eu) (needs b1 web)
    (= (capacity s1) 2) (= (load s1) 0) (= (services s1) 0)
    (= (users web s1) 0)
    (= (total-cost) 0))
  (:goal (and
    (served b1)))
  (:metric minimize (total-cost)))
