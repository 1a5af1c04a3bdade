;; Decommission server s1; its buckets must stay served.
(define (problem loadbalancing-p03)
  (:domain loadbalancing)
  (:objects
    eu - region
    web - service
    s1 s2 - server
    b1 b2 - bucket)
  (:init
    (in-region s1 eu) (supports s1 web)
    (in-region s2 eu) (supports s2 web)
    (allowed b1 eu) (needs b1 web)
    (allowed b2 eu) (needs b2 web)
    (powered s1) (running web s1)
    (powered s2) (running web s2)
    (assigned b1 s1) (served b1)
    (assigned b2 s1) (served b2)
    (= (capacity s1) 2) (= (load s1) 2) (= (services s1) 1)
    (= (capacity s2) 3) (= (load s2) 0) (= (services s2) 1)
    (= (users web s1) 2)
    (= (users web s2) 0)
    (= (total-cost) 0))
  (:goal (and
    (served b1)
    (served b2)
    (not (powered s1))))
  (:metric minimize (total-cost)))
